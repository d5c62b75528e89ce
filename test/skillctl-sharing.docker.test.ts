import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctlAs } from "./support/skillctl.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { writeTokensFile } from "./support/tokens-file.js";

const TOKENS = {
  alice: "alice-0123456789abcdef",
  bob: "bob-0123456789abcdef01",
  ops: "ops-0123456789abcdef01",
};

const ECHO = `import json, sys
print(json.dumps({"echo": json.loads(sys.argv[1]).get("x", 0)}))
`;

/**
 * skillctl's sharing commands (grant, revoke, grants, enable, disable, register --system) as
 * processes of their own against the real server with a tokens file (docs/security.md#grants-and-visibility).
 */
describe("skillctl grant, revoke, grants, enable, disable and register --system", () => {
  let engine: TestEngine;
  let dir: string;
  let codeFile: string;
  const as = (who: keyof typeof TOKENS, ...args: string[]) => skillctlAs(engine.app.port, TOKENS[who], ...args);

  beforeAll(async () => {
    const dirs = await makeDirs();
    const tokensFile = await writeTokensFile(dirs.root, [
      { agent: "alice", token: TOKENS.alice },
      { agent: "bob", token: TOKENS.bob },
      { agent: "ops", token: TOKENS.ops, admin: true },
    ]);
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_TOKENS_FILE: tokensFile } });
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-sharing-"));
    codeFile = path.join(dir, "echo.py");
    await writeFile(codeFile, ECHO);
  }, 120_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("shares a skill with an agent (pinned), lists and revokes the grant, switches it off and on", async () => {
    const registered = await as(
      "alice",
      "register",
      codeFile,
      "--name",
      "shared_echo",
      "--description",
      "Echoes x.",
      "--test-payload",
      '{"x": 1}',
    );
    expect(registered.code, registered.stderr).toBe(0);
    expect((await as("bob", "invoke", "shared_echo", '{"x": 2}')).stderr).toMatch(/NOT_FOUND/);

    const granted = await as("alice", "grant", "shared_echo", "agent:bob", "--version", "1");
    expect(granted.code, granted.stderr).toBe(0);
    expect(granted.stdout).toMatch(/^granted shared_echo v1 .*agent:bob {2}pinned to v1 {2}\(granted by alice/);
    const invoked = await as("bob", "invoke", "shared_echo", '{"x": 2}');
    expect(invoked.code, invoked.stderr).toBe(0);
    expect(JSON.parse(invoked.stdout)).toEqual({ echo: 2 });

    const listed = await as("alice", "grants", "shared_echo", "--json");
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { grants: unknown[] }).grants).toMatchObject([{ granteeAgent: "bob", version: 1 }]);
    // Only the owner (or an admin) sees the grants; to anyone else the skill's grants are not there.
    expect((await as("bob", "grants", "shared_echo")).stderr).toMatch(/NOT_FOUND/);
    expect((await as("alice", "grant", "shared_echo", "bob")).stderr).toMatch(/grantee must be agent:<agent-id> or user:<user-id>/);

    const disabled = await as("alice", "disable", "shared_echo");
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toMatch(/^disabled shared_echo v1/);
    const refused = await as("alice", "invoke", "shared_echo", '{"x": 3}');
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/FAILED_PRECONDITION.*disabled/);
    expect((await as("alice", "enable", "shared_echo")).stdout).toMatch(/^enabled shared_echo v1/);
    expect(JSON.parse((await as("alice", "invoke", "shared_echo", '{"x": 3}')).stdout)).toEqual({ echo: 3 });

    const revoked = await as("alice", "revoke", "shared_echo", "agent:bob");
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toMatch(/^revoked shared_echo v1/);
    expect((await as("alice", "grants", "shared_echo")).stdout).toBe("shared_echo has no grants\n");
    expect((await as("bob", "invoke", "shared_echo", '{"x": 2}')).stderr).toMatch(/NOT_FOUND/);
  }, 180_000);

  it("register --system is an admin's: every agent sees the skill, only an admin changes it", async () => {
    const refused = await as("alice", "register", codeFile, "--name", "sys_echo", "--description", "A system echo.", "--system");
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/PERMISSION_DENIED/);

    const registered = await as("ops", "register", codeFile, "--name", "sys_echo", "--description", "A system echo.", "--system");
    expect(registered.code, registered.stderr).toBe(0);
    expect(JSON.parse((await as("bob", "invoke", "sys_echo", '{"x": 5}')).stdout)).toEqual({ echo: 5 });
    const shown = await as("bob", "show", "sys_echo", "--json");
    expect(shown.code, shown.stderr).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ skill: { name: "sys_echo", system: true } });
    expect((await as("bob", "disable", "sys_echo")).stderr).toMatch(/PERMISSION_DENIED/);
  }, 180_000);
});
