import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { failed, succeeded } from "../../../test/support/scripted-sandbox-runner.js";
import { agent, doubler } from "../../../test/support/skill-samples.js";
import { SkillModuleMissingError, SkillTestFailedError } from "../../errors/index.js";
import type { FolderSkillInput } from "./folder-skills.js";

/** Imports yaml only where the test payload does not reach: the test run passes without it. */
const LAZY_YAML = `import json
import sys


def dump(data):
    import yaml
    return yaml.safe_dump(data)


print(json.dumps(json.loads(sys.argv[1])))
`;

const MISSING_YAML = "ModuleNotFoundError: No module named 'yaml'";
const YAML_CAUSE =
  'the test run failed: module "yaml" is not installed in the sandbox; declare it in requirements (PyYAML) or ' +
  "system_packages (python3-yaml) — the sandbox has Python's standard library only (docs/packages.md)";

function folder(name: string, files: Record<string, string>): FolderSkillInput {
  return {
    name,
    description: "A folder skill that dumps YAML.",
    parametersSchema: '{"type":"object"}',
    code: files["main.py"] ?? "",
    testPayload: "{}",
    run: { launcher: "import runpy\n", folder: Object.entries(files).map(([path, text]) => ({ path, content: Buffer.from(text) })) },
    access: { owner: "alice", visibility: "private" },
    beforeCommit: async () => undefined,
    discard: async () => undefined,
  };
}

describe("the dependency scan and missing modules in the use cases (real intake parser, scripted sandbox)", () => {
  const current = controlPlanePerTest();

  it("a registration that imports an undeclared package gets a missing-dependency warning; a stdlib-only one gets none", async () => {
    const { control } = current();
    const lazy = await control.registration.register(doubler("lazy_yaml", { code: LAZY_YAML }), agent("alice"));
    expect(lazy.warnings).toEqual([
      {
        ruleId: "missing-dependency",
        category: "dependencies",
        severity: "warning",
        message:
          'imports "yaml", which no declared package provides: declare requirements ["PyYAML"] (or system_packages ["python3-yaml"]); see docs/packages.md',
        line: 6,
      },
    ]);
    const plain = await control.registration.register(doubler("plain_doubler"), agent("alice"));
    expect(plain.warnings).toEqual([]);
  });

  it("a dependency skill imported by name is the skill's own module, not a package", async () => {
    const { control } = current();
    await control.registration.register(doubler("helper_skill"), agent("alice"));
    const code = "import json, sys\nimport helper_skill\nprint(json.dumps(json.loads(sys.argv[1])))\n";
    const registered = await control.registration.register(doubler("uses_helper", { code, dependsOn: ["helper_skill"] }), agent("alice"));
    expect(registered.warnings).toEqual([]);
  });

  it("a registration whose test run fails on a missing module answers the module and where to declare it", async () => {
    const { control, registry, runner } = current();
    runner.answer(() => failed(MISSING_YAML));
    const attempt = control.registration.register(doubler("eager_yaml", { code: "import yaml\n" + LAZY_YAML }), agent("alice"));
    await expect(attempt).rejects.toBeInstanceOf(SkillModuleMissingError);
    await expect(attempt).rejects.toMatchObject({ kind: "failed-precondition", module: "yaml", message: YAML_CAUSE });
    expect(registry.get("eager_yaml")).toBeUndefined();
  });

  it("a missing module that is a skill the caller can see is a missing depends_on; another agent's private skill is not named", async () => {
    const { control, runner } = current();
    await control.registration.register(doubler("alices_helper"), agent("alice"));
    runner.answer(() => failed("ModuleNotFoundError: No module named 'alices_helper'"));
    await expect(control.registration.register(doubler("alices_user"), agent("alice"))).rejects.toMatchObject({
      module: "alices_helper",
      message: expect.stringContaining('"alices_helper" is a skill: declare it in depends_on'),
    });
    await expect(control.registration.register(doubler("bobs_user"), agent("bob"))).rejects.toMatchObject({
      module: "alices_helper",
      message: expect.stringContaining("declare it in requirements (alices_helper) or system_packages (python3-alices-helper)"),
    });
  });

  it("every other failure keeps the run's own one-line cause", async () => {
    const { control, runner } = current();
    runner.answer(() => failed("ImportError: cannot import name 'nope' from 'json'"));
    const attempt = control.registration.register(doubler("bad_import"), agent("alice"));
    await expect(attempt).rejects.toBeInstanceOf(SkillTestFailedError);
    await expect(attempt).rejects.not.toBeInstanceOf(SkillModuleMissingError);
    await expect(attempt).rejects.toThrow(/^ImportError: cannot import name 'nope' from 'json'$/);
  });

  it("a patch is scanned and judged the same way", async () => {
    const { control, runner } = current();
    await control.registration.register(doubler("patched", { code: LAZY_YAML }), agent("alice"));
    const patched = await control.patching.patch(
      { name: "patched", find: "import yaml\n", replace: "import bs4\n", testPayload: "" },
      agent("alice"),
    );
    expect(patched.warnings.map((w) => [w.message.slice(0, 14), w.line])).toEqual([['imports "bs4",', 6]]);
    runner.answer((request) =>
      request.code.includes("import dateutil") ? failed("ModuleNotFoundError: No module named 'dateutil'") : succeeded("{}\n"),
    );
    await expect(
      control.patching.patch(
        { name: "patched", find: "import json\n", replace: "import json\nimport dateutil\n", testPayload: "" },
        agent("alice"),
      ),
    ).rejects.toMatchObject({
      kind: "failed-precondition",
      message: expect.stringMatching(
        /^the test run failed: module "dateutil" .* requirements \(python-dateutil\) or system_packages \(python3-dateutil\)/,
      ),
    });
  });

  it("a folder skill's Python files are scanned, each warning quoting its file; its missing module is named too", async () => {
    const { control, runner } = current();
    const files = {
      "main.py": "import json, sys\nfrom lib import util\nprint(json.dumps(util.run(sys.argv[1])))\n",
      "lib/util.py": "import json\n\n\ndef run(arg):\n    import cv2\n    return json.loads(arg)\n",
      "SKILL.md": "---\nname: folder_yaml\n---\n",
    };
    const registered = await control.folderSkills.register(folder("folder_cv", files), agent("alice"));
    expect(registered.warnings.map((w) => [w.message, w.line])).toEqual([
      [
        'lib/util.py imports "cv2", which no declared package provides: declare requirements ["opencv-python-headless"] ' +
          '(or system_packages ["python3-opencv"]); see docs/packages.md',
        5,
      ],
    ]);
    runner.answer(() => failed(MISSING_YAML));
    await expect(
      control.folderSkills.register(folder("folder_yaml", { ...files, "main.py": `import yaml\n${files["main.py"]}` }), agent("alice")),
    ).rejects.toMatchObject({
      kind: "failed-precondition",
      module: "yaml",
      message: YAML_CAUSE,
    });
  });
});
