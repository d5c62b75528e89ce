import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { sha256Hex } from "../src/identity/index.js";
import { connect, makeDirs, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";
import { writeTokensFile } from "./support/tokens-file.js";

/**
 * Grants, internal visibility, pinned versions, users acting through delegating agents, system
 * skills and the on/off switch (docs/security.md#grants-and-visibility), through the real server
 * with a tokens file.
 */
const TOKENS = {
  alice: "alice-0123456789abcdef",
  bob: "bob-0123456789abcdef01",
  carol: "carol-0123456789abcdef",
  desk: "desk-0123456789abcdef0",
  ops: "ops-0123456789abcdef01",
};

/** v1 prints {"v": 1, …}; a patch turns it into v2. Fails when asked to (health under the test's control). */
const CODE = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print(json.dumps({"v": 1, "echo": args.get("x", 0)}))
`;
const SCHEMA = '{"type":"object","properties":{"x":{"type":"number"},"fail":{"type":"boolean"}}}';

/** A client whose calls carry a token and, optionally, x-user-id. */
function clientOf(port: number, token: string, userId?: string): TestClient {
  return connect(port, token, undefined, userId === undefined ? {} : { "x-user-id": userId });
}

describe("grants, users, system skills and the on/off switch through the real server", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  let carol: TestClient;
  let desk: TestClient;
  let ops: TestClient;
  const forUser = new Map<string, TestClient>();

  beforeAll(async () => {
    const dirs = await makeDirs();
    const tokensFile = await writeTokensFile(dirs.root, [
      { agent: "alice", token: TOKENS.alice },
      { agent: "bob", token_sha256: sha256Hex(TOKENS.bob) },
      { agent: "carol", token: TOKENS.carol },
      { agent: "desk", token: TOKENS.desk, delegate: true },
      { agent: "ops", token: TOKENS.ops, admin: true },
    ]);
    engine = await startTestEngine({
      dirs,
      env: { SKILL_ENGINE_TOKENS_FILE: tokensFile, SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2" },
    });
    const port = engine.app.port;
    alice = connect(port, TOKENS.alice);
    bob = connect(port, TOKENS.bob);
    carol = connect(port, TOKENS.carol);
    desk = connect(port, TOKENS.desk);
    ops = connect(port, TOKENS.ops);
    for (const user of ["u1", "u2"]) forUser.set(user, clientOf(port, TOKENS.desk, user));
  }, 120_000);
  afterAll(async () => {
    for (const client of [alice, bob, carol, desk, ops, ...forUser.values()]) client?.close();
    await engine?.dispose();
  });

  const register = (client: TestClient, name: string, extra: { system?: boolean; description?: string; visibility?: Visibility } = {}) =>
    client.register({
      name,
      code: CODE,
      parametersSchema: SCHEMA,
      testPayload: '{"x": 1}',
      description: extra.description ?? `Echo a number back (${name}).`,
      ...(extra.system === undefined ? {} : { system: extra.system }),
      ...(extra.visibility === undefined ? {} : { visibility: extra.visibility }),
    });
  const grant = (client: TestClient, name: string, grantee: { agent?: string; user?: string }, version = 0) =>
    client.call(client.raw.grantSkill, { name, granteeAgent: grantee.agent ?? "", granteeUser: grantee.user ?? "", version });
  const revoke = (client: TestClient, name: string, grantee: { agent?: string; user?: string }) =>
    client.call(client.raw.revokeSkill, { name, granteeAgent: grantee.agent ?? "", granteeUser: grantee.user ?? "" });
  const setEnabled = (client: TestClient, name: string, enabled: boolean) => client.call(client.raw.setSkillEnabled, { name, enabled });
  const echoOf = async (client: TestClient, name: string) => {
    const invoked = await client.invoke(name, '{"x": 7}');
    expect(invoked.result?.exitCode).toBe(0);
    return { version: invoked.version, output: JSON.parse(invoked.result?.stdout ?? "null") as { v: number } };
  };
  const routed = async (client: TestClient, query: string, mode = RouteMode.ROUTE_MODE_KEYWORDS) =>
    (
      await client.call(client.raw.routeSkills, { query, limit: 50, format: ToolFormat.TOOL_FORMAT_OPENAI, mode, minRelevance: 0 })
    ).skills.map((s) => s.name);
  /** The message NOT_FOUND gives for a name that does not exist, with `name` in its place. */
  const missingMessage = async (name: string) => {
    const error = await rpcError(carol.get("no_such_skill_xyz"));
    return error.details.replaceAll("no_such_skill_xyz", name);
  };

  it("a grant lets B invoke A's skill while C still gets NOT_FOUND; revoking the last grant makes it private again", async () => {
    await register(alice, "share_me");
    expect((await alice.get("share_me")).skill?.visibility).toBe(Visibility.VISIBILITY_PRIVATE);
    expect((await rpcError(bob.invoke("share_me", "{}"))).code).toBe(status.NOT_FOUND);

    const granted = await grant(alice, "share_me", { agent: "bob" });
    expect(granted.skill?.visibility).toBe(Visibility.VISIBILITY_INTERNAL);
    expect(granted.skill?.grantCount).toBe(1);
    expect((await echoOf(bob, "share_me")).output.v).toBe(1);
    expect((await bob.get("share_me")).skill?.owner).toBe("alice");
    expect((await bob.list()).skills.map((s) => s.name)).toContain("share_me");
    expect(await routed(bob, "echo number share_me")).toContain("share_me");

    // C: exactly as if the name did not exist, on every path.
    const missing = await missingMessage("share_me");
    for (const attempt of [carol.get("share_me"), carol.invoke("share_me", "{}"), grant(carol, "share_me", { agent: "carol" })]) {
      const error = await rpcError(attempt);
      expect(error.code).toBe(status.NOT_FOUND);
      expect(error.details).toBe(missing);
    }
    expect((await carol.list()).skills.map((s) => s.name)).not.toContain("share_me");
    expect(await routed(carol, "echo number share_me")).not.toContain("share_me");

    // ListGrants: the owner and admins; a grantee cannot list who else has it.
    expect((await alice.call(alice.raw.listGrants, { name: "share_me" })).grants.map((g) => g.granteeAgent)).toEqual(["bob"]);
    expect((await ops.call(ops.raw.listGrants, { name: "share_me" })).grants).toHaveLength(1);
    expect((await rpcError(bob.call(bob.raw.listGrants, { name: "share_me" }))).code).toBe(status.NOT_FOUND);
    // A grantee cannot re-share or change it.
    expect((await rpcError(grant(bob, "share_me", { agent: "carol" }))).code).toBe(status.PERMISSION_DENIED);

    const revoked = await revoke(alice, "share_me", { agent: "bob" });
    expect(revoked.revoked).toBe(true);
    expect(revoked.skill?.visibility).toBe(Visibility.VISIBILITY_PRIVATE);
    expect((await rpcError(bob.invoke("share_me", "{}"))).code).toBe(status.NOT_FOUND);
    expect((await revoke(alice, "share_me", { agent: "bob" })).revoked).toBe(false);

    // Requests are checked.
    expect((await rpcError(grant(alice, "share_me", {}))).code).toBe(status.INVALID_ARGUMENT);
    expect((await rpcError(grant(alice, "share_me", { agent: "bob", user: "u1" }))).code).toBe(status.INVALID_ARGUMENT);
    expect((await rpcError(grant(alice, "share_me", { agent: "bob" }, 9))).code).toBe(status.NOT_FOUND);
  });

  it("a pinned grant keeps invoking version 1 after the owner patches to version 2", async () => {
    await register(alice, "pinned_echo");
    await grant(alice, "pinned_echo", { agent: "bob" }, 1);
    await grant(alice, "pinned_echo", { agent: "carol" });
    await alice.call(alice.raw.patchSkill, { name: "pinned_echo", find: '"v": 1', replace: '"v": 2', testPayload: "" });

    expect(await echoOf(alice, "pinned_echo")).toEqual({ version: 2, output: { v: 2, echo: 7 } });
    expect(await echoOf(bob, "pinned_echo")).toEqual({ version: 1, output: { v: 1, echo: 7 } });
    expect(await echoOf(carol, "pinned_echo")).toEqual({ version: 2, output: { v: 2, echo: 7 } });
    expect((await bob.get("pinned_echo")).skill?.pinnedVersion).toBe(1);
    // The grantee reads the code it runs; the owner the active version's.
    expect((await bob.get("pinned_echo")).code).toContain('"v": 1');
    expect((await alice.get("pinned_echo")).code).toContain('"v": 2');
    expect((await carol.get("pinned_echo")).skill?.pinnedVersion).toBe(0);

    // Changing the grant moves the grantee on.
    await grant(alice, "pinned_echo", { agent: "bob" });
    expect(await echoOf(bob, "pinned_echo")).toEqual({ version: 2, output: { v: 2, echo: 7 } });
  });

  it("a user grant works only for a delegating agent acting for that user; x-user-id from others is refused", async () => {
    await register(alice, "user_echo");
    await grant(alice, "user_echo", { user: "u1" });
    const u1 = forUser.get("u1") as TestClient;
    const u2 = forUser.get("u2") as TestClient;

    expect((await echoOf(u1, "user_echo")).output.v).toBe(1);
    expect((await u1.list()).skills.map((s) => s.name)).toContain("user_echo");
    expect(await routed(u1, "echo number user_echo")).toContain("user_echo");
    for (const other of [u2, desk]) {
      expect((await rpcError(other.invoke("user_echo", "{}"))).code).toBe(status.NOT_FOUND);
      expect(await routed(other, "echo number user_echo")).not.toContain("user_echo");
    }

    const refused = await rpcError(clientOf(engine.app.port, TOKENS.bob, "u1").invoke("user_echo", "{}"));
    expect(refused.code).toBe(status.PERMISSION_DENIED);
    expect(refused.details).toMatch(/may not act for end users.*delegate/);
    const malformed = await rpcError(clientOf(engine.app.port, TOKENS.desk, "no spaces allowed").invoke("user_echo", "{}"));
    expect(malformed.code).toBe(status.INVALID_ARGUMENT);
  });

  it("a system skill is everyone's to use and only admins' to change; its name cannot be taken", async () => {
    expect((await rpcError(register(alice, "sys_echo_denied", { system: true }))).code).toBe(status.PERMISSION_DENIED);
    const registered = await register(ops, "sys_echo", { system: true });
    expect(registered.skill?.system).toBe(true);
    expect((await echoOf(carol, "sys_echo")).output.v).toBe(1);
    expect(await routed(carol, "echo number sys_echo")).toContain("sys_echo");

    // Even its owner, once it is an ordinary agent, cannot change it.
    await ops.call(ops.raw.transferSkill, { name: "sys_echo", newOwner: "alice" });
    const changes: Record<string, Promise<unknown>> = {
      patch: alice.call(alice.raw.patchSkill, { name: "sys_echo", find: '"v": 1', replace: '"v": 3', testPayload: "" }),
      delete: alice.call(alice.raw.deleteSkill, { name: "sys_echo", force: false }),
      rollback: alice.call(alice.raw.rollbackSkill, { name: "sys_echo", version: 1 }),
      visibility: alice.call(alice.raw.setSkillVisibility, { name: "sys_echo", visibility: Visibility.VISIBILITY_PRIVATE }),
      protect: alice.call(alice.raw.setSkillProtected, { name: "sys_echo", protected: true }),
      disable: setEnabled(alice, "sys_echo", false),
      grant: grant(alice, "sys_echo", { agent: "bob" }),
      reregister: register(alice, "sys_echo"),
      takeName: register(bob, "sys_echo"),
      composedOverwrite: bob.call(bob.raw.registerComposedSkill, {
        name: "sys_echo",
        description: "a composition under a system skill's name",
        parametersSchema: SCHEMA,
        steps: [{ id: "a", skill: "share_me", args: "{}", when: "", onFailure: 1 }],
        output: "",
        testPayload: "{}",
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
      }),
    };
    for (const [attempt, call] of Object.entries(changes)) {
      const error = await rpcError(call);
      expect({ attempt, code: error.code }).toEqual({ attempt, code: status.PERMISSION_DENIED });
      expect(error.details).toMatch(/system skill/);
    }

    // Retirement: three failures would retire any other skill; no sweep retires a system skill,
    // neither its non-admin owner's nor an admin's (docs/security.md#system-skills).
    for (let i = 0; i < 3; i++) expect((await alice.invoke("sys_echo", '{"fail": true}')).result?.exitCode).not.toBe(0);
    const sweep = await alice.call(alice.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(sweep.retired.map((r) => r.name)).not.toContain("sys_echo");
    expect((await alice.get("sys_echo")).skill?.status).not.toBe(SkillStatus.SKILL_STATUS_RETIRED);
    const adminSweep = await ops.call(ops.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(adminSweep.retired.map((r) => r.name)).not.toContain("sys_echo");
    // An admin takes it out explicitly; its owner cannot.
    expect((await rpcError(alice.call(alice.raw.retireSkill, { name: "sys_echo", force: false }))).code).toBe(status.PERMISSION_DENIED);
    expect((await ops.call(ops.raw.retireSkill, { name: "sys_echo", force: false })).skill?.status).toBe(SkillStatus.SKILL_STATUS_RETIRED);
    expect((await ops.call(ops.raw.deleteSkill, { name: "sys_echo", force: false })).skill?.status).toBe(SkillStatus.SKILL_STATUS_DELETED);
  });

  it("a disabled skill is neither routed nor invocable, and comes back intact when enabled", async () => {
    await register(alice, "switch_echo", { description: "Echo a number back through the switchboard." });
    await grant(alice, "switch_echo", { agent: "bob" }, 1);
    await echoOf(alice, "switch_echo");
    const before = (await alice.get("switch_echo")).skill;
    expect(await routed(alice, "switchboard echo")).toContain("switch_echo");

    expect((await rpcError(setEnabled(bob, "switch_echo", false))).code).toBe(status.PERMISSION_DENIED);
    const disabled = (await setEnabled(alice, "switch_echo", false)).skill;
    expect(disabled?.disabled).toBe(true);
    expect(disabled?.disabledBy).toBe("alice");
    for (const client of [alice, bob, ops]) {
      const error = await rpcError(client.invoke("switch_echo", "{}"));
      expect(error.code).toBe(status.FAILED_PRECONDITION);
      expect(error.details).toMatch(/disabled.*"alice"/);
      for (const mode of [RouteMode.ROUTE_MODE_KEYWORDS, RouteMode.ROUTE_MODE_VECTORS, RouteMode.ROUTE_MODE_FUSED]) {
        expect(await routed(client, "switchboard echo", mode)).not.toContain("switch_echo");
      }
    }
    // Still listed and readable: only routing and invocation stop.
    expect((await alice.get("switch_echo")).skill?.disabled).toBe(true);

    const enabled = (await setEnabled(alice, "switch_echo", true)).skill;
    expect(enabled).toMatchObject({
      disabled: false,
      disabledBy: "",
      version: before?.version,
      contentHash: before?.contentHash,
      usageCount: before?.usageCount,
      grantCount: 1,
      visibility: Visibility.VISIBILITY_INTERNAL,
    });
    expect((await echoOf(bob, "switch_echo")).version).toBe(1);
    expect(await routed(alice, "switchboard echo")).toContain("switch_echo");
  });
});
