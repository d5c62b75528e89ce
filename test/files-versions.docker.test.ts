import { execFile } from "node:child_process";
import { lstat, readFile, rm, symlink, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InputFile } from "../src/gen/skillengine/v1/execution.js";
import { skillctl } from "./support/skillctl.js";
import { makeDirs, rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Sums the `value` column of a CSV under /sandbox/in; importable by its dependents. */
const CSV_SUM = `import csv, json, sys
def total(name):
    with open("/sandbox/in/" + name) as f:
        return sum(float(r["value"]) for r in csv.DictReader(f))
if __name__ == "__main__":
    args = json.loads(sys.argv[1])
    print(json.dumps({"total": total(args["csv"])}))
`;

/** Depends on csv_sum and reads a CSV of its own: its re-test needs its own test file. */
const CSV_REPORT = `import json, sys
import csv_sum
args = json.loads(sys.argv[1])
print(json.dumps({"report": csv_sum.total(args["csv"])}))
`;

const file = (filePath: string, text: string): InputFile => ({ path: filePath, content: Buffer.from(text) });
const T_CSV = "value\n1\n2\n";
const R_CSV = "value\n5\n";
const contents = (files: InputFile[]): string[][] => files.map((f) => [f.path, Buffer.from(f.content).toString()]);

describe("test files are kept with the version (docs/files.md#test-files)", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let engine: TestEngine;
  const testFilesDir = (name: string, version: number): string =>
    path.join(dirs.home, "memory", "acquired_skills", ".versions", name, `${version}.test-files`);
  const patch = (find: string, replace: string) =>
    engine.client.call(engine.client.raw.patchSkill, { name: "csv_sum", find, replace, testPayload: "" }, 120_000);

  beforeAll(async () => {
    dirs = await makeDirs();
    engine = await startTestEngine({ dirs });
  });
  afterAll(async () => {
    await engine?.stop().catch(() => undefined);
    await rm(dirs.root, { recursive: true, force: true });
  });

  it("are stored 0444 beside the history; a patch's test run, a dependent's re-test and skillctl test get them", async () => {
    const sum = await engine.client.register(
      { name: "csv_sum", code: CSV_SUM, testPayload: '{"csv": "data/t.csv"}', testFiles: [file("data/t.csv", T_CSV)] },
      120_000,
    );
    expect(sum.test?.stdout, JSON.stringify(sum.test)).toBe('{"total": 3.0}\n');
    const report = await engine.client.register(
      { name: "csv_report", code: CSV_REPORT, testPayload: '{"csv": "r.csv"}', testFiles: [file("r.csv", R_CSV)], dependsOn: ["csv_sum"] },
      120_000,
    );
    expect(report.test?.stdout, JSON.stringify(report.test)).toBe('{"report": 5.0}\n');
    const stored = path.join(testFilesDir("csv_sum", 1), "data", "t.csv");
    expect(await readFile(stored, "utf8")).toBe(T_CSV);
    expect((await lstat(stored)).mode & 0o777).toBe(0o444);

    // The patch's test run is handed v1's test files, and v2 keeps its own copy of them.
    const patched = await patch('{"total": total(args["csv"])}', '{"total": total(args["csv"]), "patched": True}');
    expect(patched.test?.stdout, JSON.stringify(patched.test)).toBe('{"total": 3.0, "patched": true}\n');
    expect(patched.skill?.version).toBe(2);
    expect(await readFile(path.join(testFilesDir("csv_sum", 2), "data", "t.csv"), "utf8")).toBe(T_CSV);
    // csv_report's re-test against v2 ran with its own r.csv: no failed re-test blocks it.
    const dependencies = await engine.client.call(engine.client.raw.getSkillDependencies, { name: "csv_report" });
    expect(dependencies.warnings).toEqual([]);
    expect(contents((await engine.client.get("csv_sum")).testFiles)).toEqual([["data/t.csv", T_CSV]]);

    const tested = await skillctl(engine.app.port, "test", "csv_sum", "csv_report");
    expect(tested.stdout, tested.stderr).toMatch(/^PASS csv_sum \(v2, \d+ ms\)\nPASS csv_report \(v1, \d+ ms\)\n2 passed, 0 failed\n$/);
    expect(tested.code).toBe(0);

    // A new registration brings test files of its own; the dependent's re-test still gets its own.
    const v3 = await engine.client.register(
      { name: "csv_sum", code: CSV_SUM, testPayload: '{"csv": "other.csv"}', testFiles: [file("other.csv", "value\n10\n")] },
      120_000,
    );
    expect(v3.test?.stdout, JSON.stringify(v3.test)).toBe('{"total": 10.0}\n');
    expect(v3.dependentsRetested).toEqual([{ name: "csv_report", passed: true, error: "" }]);
    expect(contents((await engine.client.get("csv_sum")).testFiles)).toEqual([["other.csv", "value\n10\n"]]);
    // A rollback makes the earlier version's own test files the active ones.
    await engine.client.call(engine.client.raw.rollbackSkill, { name: "csv_sum", version: 2 });
    expect(contents((await engine.client.get("csv_sum")).testFiles)).toEqual([["data/t.csv", T_CSV]]);
  }, 300_000);

  it("a link planted in the store is not followed: the run that needs the file is refused, naming it", async () => {
    const stored = path.join(testFilesDir("csv_sum", 2), "data", "t.csv");
    const outside = path.join(dirs.home, "outside.csv");
    // The very bytes recorded, behind a link: still refused, since the link is never followed.
    await writeFile(outside, T_CSV);
    await unlink(stored);
    await symlink(outside, stored);
    const refused = await rpcError(patch('"patched": True', '"patched": "again"'));
    expect(refused.code).toBe(status.INTERNAL);
    expect(refused.details).toContain(
      'the test files of "csv_sum" v2 are missing or altered in the canonical store (data/t.csv: a link, not a file (not followed))',
    );
    expect((await rpcError(engine.client.get("csv_sum"))).code).toBe(status.INTERNAL);
    expect((await engine.client.list()).skills.find((s) => s.name === "csv_sum")?.version).toBe(2);
    // The file put back as it was: the patch passes again.
    await unlink(stored);
    await writeFile(stored, T_CSV, { mode: 0o444 });
    expect((await patch('"patched": True', '"patched": "again"')).test?.stdout).toBe('{"total": 3.0, "patched": "again"}\n');
  }, 300_000);

  it("come back with the registry: restart, lose registry.db, rebuild it from the directory", async () => {
    await engine.stop();
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(dirs.home, `registry.db${suffix}`), { force: true });
    const rebuilt = await run(process.execPath, ["--import", "tsx", "src/cli/rebuild-registry.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir },
    });
    expect(rebuilt.stdout).toContain("csv_sum");
    expect(rebuilt.stdout).not.toMatch(/test file/);
    engine = await startTestEngine({ dirs });

    const { versions } = await engine.client.call(engine.client.raw.listSkillVersions, { name: "csv_sum" });
    expect(versions.map((v) => [v.version, v.active])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(contents((await engine.client.get("csv_sum")).testFiles)).toEqual([["data/t.csv", T_CSV]]);
    expect(contents((await engine.client.get("csv_report")).testFiles)).toEqual([["r.csv", R_CSV]]);
    // The next patch's test run gets them from the rebuilt registry's list.
    const patched = await patch('"patched": "again"', '"patched": "rebuilt"');
    expect(patched.test?.stdout, JSON.stringify(patched.test)).toBe('{"total": 3.0, "patched": "rebuilt"}\n');
    // A deleted and restored skill keeps its test files (they move with its history).
    await engine.client.call(engine.client.raw.deleteSkill, { name: "csv_report", force: false });
    await engine.client.call(engine.client.raw.restoreSkill, { name: "csv_report" });
    expect(contents((await engine.client.get("csv_report")).testFiles)).toEqual([["r.csv", R_CSV]]);
  }, 300_000);

  it("travel in an exported bundle: another service's import runs its test with them and keeps them", async () => {
    const exported = await engine.client.call(engine.client.raw.exportSkill, { name: "csv_sum" });
    const other = await startTestEngine();
    try {
      const imported = await other.client.call(
        other.client.raw.importSkillBundle,
        { archive: exported.archive, visibility: 0, onDuplicate: 0 },
        120_000,
      );
      expect(imported.test?.stdout, JSON.stringify(imported.test)).toBe('{"total": 3.0, "patched": "rebuilt"}\n');
      expect(contents((await other.client.get("csv_sum")).testFiles)).toEqual([["data/t.csv", T_CSV]]);
    } finally {
      await other.dispose();
    }
  }, 300_000);
});
