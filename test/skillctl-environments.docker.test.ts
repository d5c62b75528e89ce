import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctlAs } from "./support/skillctl.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { writeTokensFile } from "./support/tokens-file.js";
import { writeWheel } from "./support/wheelhouse.js";

const TOKENS = { alice: "alice-0123456789abcdef", ops: "ops-0123456789abcdef01" };

const USES_GREETING = `import json, sys
import greeting
print(json.dumps({"text": greeting.hello(json.loads(sys.argv[1]).get("name", "world"))}))
`;

/**
 * skillctl's commands for packages (register --requirements, envs, envs rebuild, runtimes) as
 * processes of their own against the real server, engine and installer (docs/packages.md#operators).
 */
describe("skillctl register --requirements, envs, envs rebuild and runtimes", () => {
  let engine: TestEngine;
  let dir: string;
  let wheelhouse: string;
  let codeFile: string;
  const as = (who: keyof typeof TOKENS, ...args: string[]) => skillctlAs(engine.app.port, TOKENS[who], "--timeout", "300", ...args);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-envs-"));
    wheelhouse = path.join(dir, "wheels");
    writeWheel(wheelhouse, {
      name: "greeting",
      version: "1.0.0",
      files: { "greeting/__init__.py": 'def hello(name):\n    return "hello, " + name\n' },
    });
    codeFile = path.join(dir, "greets.py");
    await writeFile(codeFile, USES_GREETING);
    const dirs = await makeDirs();
    const tokensFile = await writeTokensFile(dirs.root, [
      { agent: "alice", token: TOKENS.alice },
      { agent: "ops", token: TOKENS.ops, admin: true },
    ]);
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_WHEELHOUSE: wheelhouse, SKILL_ENGINE_TOKENS_FILE: tokensFile } });
  }, 240_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("registers a skill with its requirements and lists its environment", async () => {
    const empty = await as("alice", "envs");
    expect(empty.code, empty.stderr).toBe(0);
    expect(empty.stdout).toBe("no environments (no skill declares packages)\n");

    const registered = await as(
      "alice",
      "register",
      codeFile,
      "--name",
      "greets",
      "--description",
      "Greets.",
      "--requirements",
      "greeting==1.0.0",
    );
    expect(registered.code, registered.stderr).toBe(0);
    expect(registered.stdout).toMatch(/^registered greets v1/);
    const invoked = await as("alice", "invoke", "greets", '{"name": "ada"}');
    expect(JSON.parse(invoked.stdout)).toEqual({ text: "hello, ada" });

    const table = await as("alice", "envs");
    expect(table.code, table.stderr).toBe(0);
    const [header, row, ...rest] = table.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^ID\s+STATUS\s+SIZE\s+SKILLS\s+FILES\s+BUILT\s+DECLARES$/);
    expect(row).toMatch(/^[0-9a-f]{32}\s+ready\s+\d+\.\d MiB\s+1\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+greeting==1\.0\.0$/);
    expect(rest).toEqual([]);

    const json = await as("alice", "envs", "--json");
    const parsed = JSON.parse(json.stdout) as { environments: Array<{ status: string; lock: Array<{ name: string; version: string }> }> };
    expect(parsed.environments).toMatchObject([{ status: "ENVIRONMENT_STATUS_READY", lock: [{ name: "greeting", version: "1.0.0" }] }]);
  });

  it("rebuilds for admins only", async () => {
    const refused = await as("alice", "envs", "rebuild");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/PERMISSION_DENIED: RebuildEnvironments is for admins/);

    const skipped = await as("ops", "envs", "rebuild", "--missing-only");
    expect(skipped.code, skipped.stderr).toBe(0);
    expect(skipped.stdout).toMatch(/^skipped [0-9a-f]{32}\n0 rebuilt, 1 skipped, 0 failed in \d+ ms\n$/);

    const rebuilt = await as("ops", "envs", "rebuild");
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    expect(rebuilt.stdout).toMatch(/^rebuilt [0-9a-f]{32}\n1 rebuilt, 0 skipped, 0 failed in \d+ ms\n$/);

    expect((await as("ops", "envs", "--missing-only")).stderr).toMatch(/--missing-only goes with 'envs rebuild'/);
  }, 600_000);

  it("reports the runtimes", async () => {
    const json = await as("alice", "runtimes", "--json");
    const report = JSON.parse(json.stdout) as {
      pythonMatches: boolean;
      packageSource: { kind: string; location: string };
      debian: { available: boolean };
    };
    expect(report.packageSource).toMatchObject({ kind: "wheelhouse", location: wheelhouse });
    const healthy = report.pythonMatches && report.debian.available;
    expect(json.code).toBe(healthy ? 0 : 1);

    const text = await as("alice", "runtimes");
    expect(text.code).toBe(json.code);
    expect(text.stdout).toMatch(/^sandbox python: 3\.\d+\.\d+\n/);
    expect(text.stdout).toContain(`packages from:  wheelhouse ${wheelhouse} (answers: 1 wheel)\n`);
  });
});
