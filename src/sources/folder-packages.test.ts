import { describe, expect, it } from "vitest";
import type { SkillRecord } from "../control/index.js";
import { plainSkillFolder } from "./bundles.js";
import { folderPackages, parseRequirementsFile } from "./folder-packages.js";
import { parseSkillManifest } from "./skill-manifest.js";

const skillMd = (extra: string, entrypoint = "entrypoint: run.py\n"): string =>
  `---\nname: reads_yaml\ndescription: Reads YAML.\n${entrypoint}${extra}---\nBody.\n`;

describe("packages in SKILL.md's frontmatter (metadata.requirements, metadata.system_packages)", () => {
  it("reads both lists as written, and tells no declaration from an empty one", () => {
    const manifest = parseSkillManifest(
      skillMd("metadata:\n  requirements: [PyYAML==6.0.1, 'python-dateutil>=2.8']\n  system_packages: [python3-numpy]\n  author: ada\n"),
    );
    expect(manifest.requirements).toEqual(["PyYAML==6.0.1", "python-dateutil>=2.8"]);
    expect(manifest.systemPackages).toEqual(["python3-numpy"]);
    expect(manifest.metadata["metadata"]).toMatchObject({ author: "ada" });
    expect(parseSkillManifest(skillMd("")).requirements).toBeUndefined();
    expect(parseSkillManifest(skillMd("metadata:\n  requirements: []\n")).requirements).toEqual([]);
    // Someone else's `metadata` that is not a mapping is kept, not read.
    expect(parseSkillManifest(skillMd("metadata: free text\n")).requirements).toBeUndefined();
  });

  it("refuses lists that are not lists of strings, and entries the declaration rules refuse, naming the key", () => {
    expect(() => parseSkillManifest(skillMd("metadata:\n  requirements: PyYAML\n"))).toThrow(
      /SKILL\.md: metadata\.requirements must be a list of strings/,
    );
    expect(() => parseSkillManifest(skillMd("metadata:\n  system_packages: [1]\n"))).toThrow(/metadata\.system_packages must be a list/);
    expect(() => parseSkillManifest(skillMd("metadata:\n  requirements: [ok, '--index-url=http://x/']\n"))).toThrow(
      /SKILL\.md: metadata\.requirements\[1\]: holds a word starting with "-"/,
    );
    expect(() => parseSkillManifest(skillMd("metadata:\n  system_packages: [Not_Debian]\n"))).toThrow(
      /SKILL\.md: metadata\.system_packages\[0\]: "Not_Debian" is not a Debian package name/,
    );
  });

  it("refuses packages on an instructions-only skill: nothing of it runs", () => {
    expect(() => parseSkillManifest(skillMd("metadata:\n  requirements: [PyYAML]\n", ""))).toThrow(/has no entrypoint/);
  });
});

describe("requirements.txt", () => {
  it("reads one requirement a line; blank lines and comments are ignored", () => {
    const text = "\uFEFF# what the skill needs\r\nPyYAML==6.0.1\r\n\n   \npython-dateutil>=2.8  # dates\nrequests[socks] >= 2, < 3\n";
    expect(parseRequirementsFile(text)).toEqual(["PyYAML==6.0.1", "python-dateutil>=2.8", "requests[socks] >= 2, < 3"]);
    expect(parseRequirementsFile("")).toEqual([]);
  });

  it("refuses installer options, URLs, paths and continuations, naming the file and the line", () => {
    const refused: Array<[string, RegExp]> = [
      ["ok\n-r other.txt\n", /^requirements\.txt line 2: "-r other\.txt" is an installer option/],
      ["-e .\n", /^requirements\.txt line 1: "-e \." is an installer option/],
      ["# mirror\n--index-url https://example.invalid/simple\n", /^requirements\.txt line 2: .*installer option/],
      ["x @ https://example.invalid/x.whl\n", /^requirements\.txt line 1: "x @ https:.*" is a direct reference or URL/],
      ["https://example.invalid/x.whl\n", /^requirements\.txt line 1: .*URL/],
      ["./vendor/x.whl\n", /^requirements\.txt line 1: "\.\/vendor\/x\.whl" is a path/],
      ["a==1 \\\n  --hash=sha256:00\n", /^requirements\.txt line 1: ends with "\\": line continuations are not accepted/],
      ["a; python_version<'3.8'\n", /^requirements\.txt line 1: .*environment marker/],
      ["a =1\n", /^requirements\.txt line 1: "=1" is not a version specifier/],
    ];
    for (const [text, message] of refused) expect(() => parseRequirementsFile(text), text).toThrow(message);
    expect(() => parseRequirementsFile(Array.from({ length: 65 }, (_, i) => `p${i}`).join("\n"))).toThrow(
      /requirements\.txt: at most 64 requirements/,
    );
  });
});

describe("a folder's packages", () => {
  const executable = parseSkillManifest(skillMd("metadata:\n  system_packages: [python3-yaml]\n"));

  it("takes requirements.txt for the Python packages beside metadata.system_packages", () => {
    expect(folderPackages(executable, "greeting==1.0\n")).toEqual({ requirements: ["greeting==1.0"], systemPackages: ["python3-yaml"] });
    expect(folderPackages(parseSkillManifest(skillMd("")), undefined)).toEqual({ requirements: [], systemPackages: [] });
  });

  it("refuses metadata.requirements and a requirements.txt together, naming both", () => {
    const both = parseSkillManifest(skillMd("metadata:\n  requirements: [greeting]\n"));
    expect(() => folderPackages(both, "greeting\n")).toThrow(/metadata\.requirements and the folder has a requirements\.txt/);
    // Even an empty list is a declaration: which one was meant is not guessed.
    expect(() => folderPackages(parseSkillManifest(skillMd("metadata:\n  requirements: []\n")), "greeting\n")).toThrow(
      /metadata\.requirements and the folder has a requirements\.txt/,
    );
  });

  it("does not read an instructions-only folder's requirements.txt (nothing of it runs)", () => {
    const instructions = parseSkillManifest(skillMd("", ""));
    expect(folderPackages(instructions, "-r anything\n")).toEqual({ requirements: [], systemPackages: [] });
  });
});

describe("an exported plain skill's folder", () => {
  const skill = {
    name: "reads_yaml",
    description: "Reads YAML.",
    parametersSchema: '{"type":"object"}',
    testPayload: "{}",
  } as SkillRecord;

  it("declares the version's packages in SKILL.md's metadata, so an import declares the same ones", () => {
    const files = plainSkillFolder(skill, "print(1)\n", {
      requirements: ["pyyaml==6.0.1"],
      systemPackages: ["python3-numpy"],
    });
    const manifest = parseSkillManifest(files.find((f) => f.path === "SKILL.md")?.content.toString("utf8") ?? "");
    expect(folderPackages(manifest, undefined)).toEqual({ requirements: ["pyyaml==6.0.1"], systemPackages: ["python3-numpy"] });
  });

  it("writes no metadata for a skill without packages", () => {
    const text =
      plainSkillFolder(skill, "print(1)\n")
        .find((f) => f.path === "SKILL.md")
        ?.content.toString("utf8") ?? "";
    expect(text).not.toMatch(/metadata/);
    expect(parseSkillManifest(text).requirements).toBeUndefined();
  });
});

describe("secrets in SKILL.md's frontmatter (metadata.secrets, docs/skill-sources.md#secrets)", () => {
  it("reads the names, checked by RegisterSkill's rules; none when absent", () => {
    expect(parseSkillManifest(skillMd("metadata:\n  secrets: [WEATHER_API_KEY, GEO_TOKEN]\n")).secrets).toEqual([
      "WEATHER_API_KEY",
      "GEO_TOKEN",
    ]);
    expect(parseSkillManifest(skillMd("")).secrets).toEqual([]);
    expect(() => parseSkillManifest(skillMd("metadata:\n  secrets: WEATHER_API_KEY\n"))).toThrow(
      /metadata\.secrets must be a list of strings/,
    );
    expect(() => parseSkillManifest(skillMd("metadata:\n  secrets: [ok]\n"))).toThrow(/metadata\.secrets\[0\]: "ok" is not a secret name/);
    expect(() => parseSkillManifest(skillMd("metadata:\n  secrets: [A, A]\n"))).toThrow(/metadata\.secrets\[1\]: "A" is declared twice/);
    expect(() => parseSkillManifest(skillMd("metadata:\n  secrets: [A]\n", ""))).toThrow(
      /declares metadata\.secrets but has no entrypoint/,
    );
  });

  it("an exported plain skill declares its version's secret names, so an import declares the same ones", () => {
    const skill = {
      name: "reads_yaml",
      description: "Reads YAML.",
      parametersSchema: '{"type":"object"}',
      testPayload: "{}",
    } as SkillRecord;
    const files = plainSkillFolder(skill, "print(1)\n", undefined, [], ["WEATHER_API_KEY"]);
    const text = files.find((f) => f.path === "SKILL.md")?.content.toString("utf8") ?? "";
    expect(parseSkillManifest(text).secrets).toEqual(["WEATHER_API_KEY"]);
  });
});
