import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogStatus } from "../src/gen/skillengine/v1/composition.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** An executable folder whose script imports the skills it depends on. */
function executableFolder(name: string, dependsOn: string, script: string): Record<string, string> {
  return {
    "SKILL.md": `---\nname: ${name}\ndescription: Scales a value (${name}).\nentrypoint: run.py\ntest_payload: {"value": 2}\n${dependsOn}---\nScale.\n`,
    "run.py": script,
  };
}

const SCALE_WITH = (module: string): string => `import json, sys
import ${module}
args = json.loads(sys.argv[1])
print(json.dumps({"value": args["value"] * ${module}.FACTOR}))
`;

/** Folder skills declare depends_on like plain skills (docs/skill-sources.md#dependencies). */
describe("skill folders with depends_on: order, missing dependencies and cycles, imports at run time", () => {
  let root: string;
  let skills: string;
  let engine: TestEngine;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-folders-deps-"));
    skills = path.join(root, "skills");
    const folders: Record<string, Record<string, string>> = {
      // Found first, but needs zz_factor, found later in the same scan.
      aa_scaler: executableFolder("aa_scaler", "depends_on: [zz_factor]\n", SCALE_WITH("zz_factor")),
      zz_factor: executableFolder(
        "zz_factor",
        "",
        `import json\nFACTOR = 3\nif __name__ == "__main__":\n    print(json.dumps({"factor": FACTOR}))\n`,
      ),
      // A plain skill registered through the RPC, named as one string.
      uses_plain: executableFolder("uses_plain", "depends_on: plain_factor\n", SCALE_WITH("plain_factor")),
      missing: executableFolder("needs_ghost", "depends_on: [ghost_skill]\n", SCALE_WITH("ghost_skill")),
      cycle_a: { "SKILL.md": "---\nname: cycle_a\ndescription: First of a cycle.\ndepends_on: [cycle_b]\n---\nA.\n" },
      cycle_b: { "SKILL.md": "---\nname: cycle_b\ndescription: Second of a cycle.\ndepends_on: [cycle_a]\n---\nB.\n" },
    };
    for (const [folder, files] of Object.entries(folders)) {
      for (const [file, content] of Object.entries(files)) {
        await mkdir(path.join(skills, folder), { recursive: true });
        await writeFile(path.join(skills, folder, file), content);
      }
    }
    // The RPC-registered dependency exists before the folders are scanned (an empty directory at start).
    const dirs = await makeDirs();
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_SKILL_DIRS: path.join(root, "later"), SKILL_ENGINE_SKILL_WATCH: "off" } });
    await engine.client.register({
      name: "plain_factor",
      code: `import json\nFACTOR = 5\nif __name__ == "__main__":\n    print(json.dumps({"factor": FACTOR}))\n`,
    });
    await engine.stop();
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_SKILL_DIRS: skills, SKILL_ENGINE_SKILL_WATCH: "off" } });
  }, 300_000);
  afterAll(async () => {
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("registers a folder after the folder it depends on, and its runs import it", async () => {
    const scan = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 240_000);
    const byFolder = Object.fromEntries(scan.sources.map((s) => [path.basename(s.sourceFolder), s]));
    expect(byFolder.zz_factor?.status).toBe(CatalogStatus.CATALOG_STATUS_READY);
    expect(byFolder.aa_scaler).toMatchObject({ name: "aa_scaler", status: CatalogStatus.CATALOG_STATUS_READY, version: 1 });
    expect(byFolder.uses_plain).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY, version: 1 });
    expect((await engine.client.invoke("aa_scaler", '{"value": 7}')).result?.stdout).toBe('{"value": 21}\n');
    expect((await engine.client.invoke("uses_plain", '{"value": 7}')).result?.stdout).toBe('{"value": 35}\n');
    const deps = await engine.client.call(engine.client.raw.getSkillDependencies, { name: "aa_scaler" });
    expect(deps.dependsOn).toEqual(["zz_factor"]);
    expect(deps.loadOrder).toEqual(["zz_factor", "aa_scaler"]);
  });

  it("refuses a folder whose dependency is missing, and folders that close a cycle, naming them", async () => {
    const scan = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 240_000);
    const byFolder = Object.fromEntries(scan.sources.map((s) => [path.basename(s.sourceFolder), s]));
    expect(byFolder.missing).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      reason: 'depends_on[0]: no skill named "ghost_skill" is registered',
    });
    expect(byFolder.cycle_a).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_FAILED,
      reason: "depends_on: would close a dependency cycle: cycle_a → cycle_b → cycle_a",
    });
    expect(byFolder.cycle_b?.status).toBe(CatalogStatus.CATALOG_STATUS_FAILED);
    // A dependency that appears later is a reason to try the folder again.
    await engine.client.register({
      name: "ghost_skill",
      code: `import json\nFACTOR = 2\nif __name__ == "__main__":\n    print(json.dumps({"factor": FACTOR}))\n`,
    });
    const again = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 240_000);
    expect(again.sources.find((s) => path.basename(s.sourceFolder) === "missing")?.status).toBe(CatalogStatus.CATALOG_STATUS_READY);
  });
});
