import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CatalogEntry, CatalogStatus } from "../src/gen/skillengine/v1/composition.js";
import { unpackBundle } from "../src/sources/index.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { writeWheel } from "./support/wheelhouse.js";

/**
 * Folder skills that declare packages, through a real server, engine and installer
 * (docs/skill-sources.md#packages): in requirements.txt or in SKILL.md's metadata, an option line
 * refused naming its line, an edit that changes them, one that cannot be built, and ExportSkill →
 * ImportSkillBundle keeping them. The wheels are made by the test; nothing comes from outside the machine.
 */
const RUN = `import json, sys
import greeting
args = json.loads(sys.argv[1])
print(json.dumps({"text": greeting.hello(args.get("name", "world"))}))
`;
const skillMd = (name: string, extra = ""): string =>
  `---\nname: ${name}\ndescription: Greets someone by name with the greeting package (${name}).\nentrypoint: run.py\ntest_payload: {"name": "ada"}\n${extra}---\nGreets.\n`;

async function writeFolder(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const [file, content] of Object.entries(files)) await writeFile(path.join(dir, file), content);
}

describe("folder skills that declare packages, through a real server, engine and installer", () => {
  let root: string;
  let skills: string;
  let engine: TestEngine;
  let elsewhere: TestEngine;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "packages-folders-"));
    const wheelhouse = path.join(root, "wheels");
    writeWheel(wheelhouse, {
      name: "greeting",
      version: "1.0.0",
      files: { "greeting/__init__.py": 'def hello(name):\n    return "hello, " + name\n' },
    });
    writeWheel(wheelhouse, {
      name: "greeting",
      version: "2.0.0",
      files: { "greeting/__init__.py": 'def hello(name):\n    return "hi, " + name\n' },
    });
    skills = path.join(root, "skills");
    await writeFolder(path.join(skills, "from_txt"), {
      "SKILL.md": skillMd("from_txt"),
      "run.py": RUN,
      "requirements.txt": "# what run.py imports\ngreeting==1.0.0\n",
    });
    await writeFolder(path.join(skills, "from_meta"), {
      "SKILL.md": skillMd("from_meta", "metadata:\n  requirements: [Greeting==1.0.0]\n"),
      "run.py": RUN,
    });
    await writeFolder(path.join(skills, "sneaky"), {
      "SKILL.md": skillMd("sneaky"),
      "run.py": RUN,
      "requirements.txt": "greeting==1.0.0\n--index-url http://127.0.0.1:9/simple\n",
    });
    await writeFolder(path.join(skills, "both"), {
      "SKILL.md": skillMd("both", "metadata:\n  requirements: [greeting==1.0.0]\n"),
      "run.py": RUN,
      "requirements.txt": "greeting==1.0.0\n",
    });
    const env = { SKILL_ENGINE_WHEELHOUSE: wheelhouse, SKILL_ENGINE_SKILL_WATCH: "off" };
    [engine, elsewhere] = await Promise.all([
      startTestEngine({ dirs: await makeDirs(), env: { ...env, SKILL_ENGINE_SKILL_DIRS: skills } }),
      startTestEngine({ env }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await Promise.all([engine?.dispose(), elsewhere?.dispose()]);
    await rm(root, { recursive: true, force: true });
  });

  const rescan = async (): Promise<Record<string, CatalogEntry>> => {
    const scan = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 600_000);
    return Object.fromEntries(scan.sources.map((s) => [path.basename(s.sourceFolder), s]));
  };
  const greet = async (client: TestEngine["client"], name: string): Promise<unknown> =>
    JSON.parse((await client.invoke(name, '{"name": "bob"}', 120_000)).result?.stdout ?? "{}");

  it("runs a folder skill whose wheel is declared in requirements.txt, and one declaring it in metadata.requirements", async () => {
    const byFolder = await rescan();
    expect(byFolder.from_txt).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY, version: 1 });
    expect(byFolder.from_meta).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY, version: 1 });
    const fromTxt = await engine.client.get("from_txt");
    const fromMeta = await engine.client.get("from_meta");
    expect(fromTxt.skill?.requirements).toEqual(["greeting==1.0.0"]);
    expect(fromMeta.skill?.requirements).toEqual(["greeting==1.0.0"]);
    // The same set: one environment for both.
    expect(fromTxt.skill?.environmentId).toMatch(/^[0-9a-f]{32}$/);
    expect(fromMeta.skill?.environmentId).toBe(fromTxt.skill?.environmentId);
    expect(await greet(engine.client, "from_txt")).toEqual({ text: "hello, bob" });
    expect(await greet(engine.client, "from_meta")).toEqual({ text: "hello, bob" });
  }, 600_000);

  it("refuses an installer option in requirements.txt naming the line, and a folder declaring in both places", async () => {
    const byFolder = await rescan();
    expect(byFolder.sneaky).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      reason: expect.stringMatching(/^requirements\.txt line 2: "--index-url http:\/\/127\.0\.0\.1:9\/simple" is an installer option/),
    });
    expect(byFolder.both).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      reason: expect.stringMatching(/metadata\.requirements and the folder has a requirements\.txt/),
    });
    expect((await engine.client.list(true)).skills.map((s) => s.name)).not.toContain("sneaky");
  }, 600_000);

  it("makes a new version when an edit changes the packages; one that cannot be built is refused, the version before stays", async () => {
    await writeFile(path.join(skills, "from_txt", "requirements.txt"), "greeting==2.0.0\n");
    expect((await rescan()).from_txt).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY, version: 2 });
    expect((await engine.client.get("from_txt")).skill?.requirements).toEqual(["greeting==2.0.0"]);
    expect(await greet(engine.client, "from_txt")).toEqual({ text: "hi, bob" });

    await writeFile(path.join(skills, "from_txt", "requirements.txt"), "greeting==2.0.0\nnosuchpackage==9.9\n");
    expect((await rescan()).from_txt).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      version: 2,
      reason: expect.stringMatching(/nosuchpackage/),
    });
    const still = await engine.client.get("from_txt");
    expect([still.skill?.version, still.skill?.requirements]).toEqual([2, ["greeting==2.0.0"]]);
    expect(await greet(engine.client, "from_txt")).toEqual({ text: "hi, bob" });
  }, 600_000);

  it("ExportSkill → ImportSkillBundle keeps the packages, for a plain skill and for a folder skill", async () => {
    await engine.client.register(
      { name: "plain_greets", code: RUN, testPayload: '{"name": "ada"}', requirements: ["greeting==1.0.0"] },
      300_000,
    );
    const plain = await engine.client.call(engine.client.raw.exportSkill, { name: "plain_greets" });
    const files = await unpackBundle(Buffer.from(plain.archive));
    expect(files.find((f) => f.path === "SKILL.md")?.content.toString("utf8")).toMatch(
      /metadata:\n {2}requirements:\n {4}- greeting==1\.0\.0\n/,
    );
    const folder = await engine.client.call(engine.client.raw.exportSkill, { name: "from_txt" });

    for (const [name, archive, requirements] of [
      ["plain_greets", plain.archive, ["greeting==1.0.0"]],
      ["from_txt", folder.archive, ["greeting==2.0.0"]],
    ] as const) {
      const imported = await elsewhere.client.call(
        elsewhere.client.raw.importSkillBundle,
        { archive: Buffer.from(archive), visibility: 0, onDuplicate: 0 },
        300_000,
      );
      expect(imported.skill?.requirements).toEqual(requirements);
      expect((await elsewhere.client.get(name)).skill?.environmentId).toMatch(/^[0-9a-f]{32}$/);
    }
    expect(await greet(elsewhere.client, "plain_greets")).toEqual({ text: "hello, bob" });
    expect(await greet(elsewhere.client, "from_txt")).toEqual({ text: "hi, bob" });
  }, 600_000);
});
