import { execFile } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
const echo = (tag: string) => `import json, sys\nprint(json.dumps({"tag": "${tag}", "args": json.loads(sys.argv[1])}))\n`;

describe("operators: legacy migration on first start, and rebuilding a lost registry", () => {
  const engines: TestEngine[] = [];
  afterAll(async () => {
    for (const engine of engines) await engine.dispose().catch(() => undefined);
  });

  it("copies skills from the legacy sandbox layout on first start, once, leaving the legacy files in place", async () => {
    const dirs = await makeDirs();
    const legacy = path.join(dirs.sandboxDir, "acquired_skills");
    await mkdir(legacy, { recursive: true });
    await writeFile(path.join(legacy, "old_echo.py"), echo("legacy"));
    // Imports go through the same intake as registrations: repaired, or refused by the guard.
    await writeFile(path.join(legacy, "fenced.py"), "Here is the tool:\n```python\n" + echo("fenced") + "```\n");
    await writeFile(path.join(legacy, "wiper.py"), 'import os\nos.system("rm -rf / --no-preserve-root")\nprint("done")\n');
    await writeFile(
      path.join(legacy, "skills_registry.json"),
      JSON.stringify({
        old_echo: {
          description: "Echoes its arguments (legacy).",
          parameters_schema: { type: "object" },
          usage_count: 7,
          status: "active",
        },
      }),
    );

    const first = await startTestEngine({ dirs });
    engines.push(first);
    expect(first.app.migrationReport.migrated).toEqual(["fenced", "old_echo"]);
    expect(first.app.migrationReport.skipped).toEqual([
      {
        file: "wiper.py",
        reason: expect.stringMatching(/^rejected by intake: code: rejected by content guard rule "destructive-rm-root"/),
      },
    ]);
    expect((await first.client.get("fenced")).code).toBe(echo("fenced"));
    const { skill, code } = await first.client.get("old_echo");
    expect(skill).toMatchObject({ description: "Echoes its arguments (legacy).", usageCount: 7, autoCreated: true, version: 1 });
    expect(code).toBe(echo("legacy"));
    expect((await first.client.invoke("old_echo", '{"x": 1}')).result?.stdout).toBe('{"tag": "legacy", "args": {"x": 1}}\n');
    await first.stop();

    // Legacy files stay; a second start is a no-op.
    expect(await readFile(path.join(legacy, "old_echo.py"), "utf8")).toBe(echo("legacy"));
    const second = await startTestEngine({ dirs });
    engines.push(second);
    expect(second.app.migrationReport.migrated).toEqual([]);
    expect((await second.client.list()).skills.map((s) => s.name)).toEqual(["fenced", "old_echo"]);
    await second.stop();
  });

  it("npm run rebuild-registry restores a lost registry.db from the canonical directory", async () => {
    const dirs = await makeDirs();
    const original = await startTestEngine({ dirs });
    engines.push(original);
    await original.client.register({ name: "kept", code: echo("v1") });
    await original.client.register({ name: "kept", code: echo("v2") });
    await original.client.register({ name: "binned", code: echo("bin") });
    await original.client.call(original.client.raw.deleteSkill, { name: "binned", force: false });
    await original.client.call(original.client.raw.setSkillProtected, { name: "kept", protected: true });
    const before = (await original.client.list(true)).skills;
    await original.stop();

    await rm(path.join(dirs.home, "registry.db"), { force: true });
    await rm(path.join(dirs.home, "registry.db-wal"), { force: true });
    await rm(path.join(dirs.home, "registry.db-shm"), { force: true });
    const { stdout } = await run(process.execPath, ["--import", "tsx", "src/cli/rebuild-registry.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir },
    });
    expect(stdout).toContain("kept");

    const rebuilt = await startTestEngine({ dirs });
    engines.push(rebuilt);
    const after = (await rebuilt.client.list(true)).skills;
    expect(after.map((s) => [s.name, s.status, s.version, s.contentHash, s.protected])).toEqual(
      before.map((s) => [s.name, s.status, s.version, s.contentHash, s.protected]),
    );
    expect(after.find((s) => s.name === "binned")?.status).toBe(SkillStatus.SKILL_STATUS_DELETED);
    expect((await rebuilt.client.invoke("kept", "{}")).result?.stdout).toBe('{"tag": "v2", "args": {}}\n');
    const { versions } = await rebuilt.client.call(rebuilt.client.raw.listSkillVersions, { name: "kept" });
    expect(versions.map((v) => v.version)).toEqual([1, 2]);
    await rebuilt.stop();

    // The routing indexes are re-created from the registry by their own command.
    const routed = await run(process.execPath, ["--import", "tsx", "src/cli/rebuild-routing.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir },
    });
    expect(routed.stdout).toMatch(/re-indexed 2 skill\(s\)/);
    const again = await startTestEngine({ dirs });
    engines.push(again);
    // No relevance floor: the question is whether the skill is in the rebuilt indexes at all.
    const route = await again.client.call(again.client.raw.routeSkills, {
      query: "echo v2 tag",
      limit: 3,
      format: 0,
      mode: 0,
      minRelevance: 0,
    });
    expect(route.skills.map((s) => s.name)).toEqual(["kept"]);
  });
});
