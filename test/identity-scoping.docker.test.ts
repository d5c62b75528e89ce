import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, type RouteSkillsResponse, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";
import { readMirrorSkills } from "./support/registry-mirror.js";

const TOKENS = {
  alice: "alice-0123456789abcdef",
  bob: "bob-0123456789abcdef01",
  ops: "ops-0123456789abcdef01",
};

/** Converts temperatures; fails when asked to, so health outcomes are under the test's control. */
const CONVERTER = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print(json.dumps({"fahrenheit": args.get("celsius", 0) * 9 / 5 + 32}))
`;
const SCHEMA = '{"type":"object","properties":{"celsius":{"type":"number"},"fail":{"type":"boolean"}}}';

describe("identity and scoping through the real server (bearer tokens, owners, visibility)", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  let ops: TestClient;
  let anonymous: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},ops:admin=${TOKENS.ops}` },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    ops = connect(engine.app.port, TOKENS.ops);
    anonymous = connect(engine.app.port);
  });
  afterAll(async () => {
    for (const client of [alice, bob, ops, anonymous]) client?.close();
    await engine?.dispose();
  });

  const register = (client: TestClient, name: string, extra: { visibility?: Visibility; description?: string } = {}) =>
    client.register({
      name,
      code: CONVERTER,
      parametersSchema: SCHEMA,
      testPayload: '{"celsius": 100}',
      description: extra.description ?? "Convert a temperature from degrees Celsius to degrees Fahrenheit.",
      ...(extra.visibility === undefined ? {} : { visibility: extra.visibility }),
    });
  const route = (client: TestClient, query: string): Promise<RouteSkillsResponse> =>
    client.call(client.raw.routeSkills, { query, limit: 10, format: ToolFormat.TOOL_FORMAT_OPENAI, mode: RouteMode.ROUTE_MODE_FUSED });
  const routedNames = async (client: TestClient, query: string) => (await route(client, query)).skills.map((s) => s.name);
  const listedNames = async (client: TestClient, includeInactive = false) => (await client.list(includeInactive)).skills.map((s) => s.name);
  const whoami = (client: TestClient) => client.call(client.raw.whoAmI, {});

  /** Every call a non-owner could try on a skill by name, one at a time. */
  const ATTEMPTS: Record<string, (client: TestClient, name: string) => Promise<unknown>> = {
    get: (client, name) => client.get(name),
    invoke: (client, name) => client.invoke(name, '{"celsius": 1}'),
    versions: (client, name) => client.call(client.raw.listSkillVersions, { name }),
    stats: (client, name) => client.call(client.raw.getSkillStats, { name }),
    patch: (client, name) => client.call(client.raw.patchSkill, { name, find: "9 / 5", replace: "1.8", testPayload: "" }),
    rollback: (client, name) => client.call(client.raw.rollbackSkill, { name, version: 1 }),
    delete: (client, name) => client.call(client.raw.deleteSkill, { name, force: false }),
    restore: (client, name) => client.call(client.raw.restoreSkill, { name }),
    protect: (client, name) => client.call(client.raw.setSkillProtected, { name, protected: true }),
    visibility: (client, name) => client.call(client.raw.setSkillVisibility, { name, visibility: Visibility.VISIBILITY_PUBLIC }),
    feedback: (client, name) => client.call(client.raw.recordRouteFeedback, { routeId: "r", name, success: true }),
  };
  const READS = ["get", "invoke", "versions", "stats", "feedback"];

  /** The status and message each of `calls` (default: all) gets. */
  async function outcomesOf(
    client: TestClient,
    name: string,
    calls = Object.keys(ATTEMPTS),
  ): Promise<Record<string, { code: number; details: string }>> {
    const outcomes: Record<string, { code: number; details: string }> = {};
    for (const call of calls) {
      const error = await rpcError((ATTEMPTS[call] as (c: TestClient, n: string) => Promise<unknown>)(client, name));
      outcomes[call] = { code: error.code, details: error.details };
    }
    return outcomes;
  }

  it("refuses calls without a valid bearer token with UNAUTHENTICATED, and says how to send one", async () => {
    const missing = await rpcError(anonymous.list());
    expect(missing.code).toBe(status.UNAUTHENTICATED);
    expect(missing.details).toBe('this service requires a token: send the metadata "authorization: Bearer <token>"');

    const wrong = connect(engine.app.port, `${TOKENS.alice}-revoked`);
    try {
      const refused = await rpcError(wrong.register({ name: "sneaky", code: CONVERTER }));
      expect(refused.code).toBe(status.UNAUTHENTICATED);
      expect(refused.details).toBe("the bearer token is not valid (unknown or revoked)");
    } finally {
      wrong.close();
    }
    // Refused before any work: nothing was registered.
    expect(await listedNames(ops, true)).not.toContain("sneaky");
  });

  it("WhoAmI names the agent each token maps to, and its role", async () => {
    expect(await whoami(alice)).toEqual({ agentId: "alice", admin: false, authenticated: true });
    expect(await whoami(ops)).toEqual({ agentId: "ops", admin: true, authenticated: true });
  });

  it("a private skill is its owner's: to another agent every call answers exactly as for a name that does not exist", async () => {
    const registered = await register(alice, "alice_converter");
    expect(registered.skill).toMatchObject({ owner: "alice", visibility: Visibility.VISIBILITY_PRIVATE });

    const hidden = await outcomesOf(bob, "alice_converter");
    const absent = await outcomesOf(bob, "no_such_converter");
    for (const [call, outcome] of Object.entries(hidden)) {
      expect({ call, ...outcome }).toEqual({
        call,
        code: status.NOT_FOUND,
        details: expect.stringContaining('"alice_converter"') as string,
      });
      expect({ call, details: outcome.details.replace("alice_converter", "X") }).toEqual({
        call,
        details: absent[call]?.details.replace("no_such_converter", "X"),
      });
    }
    expect(await listedNames(bob, true)).not.toContain("alice_converter");
    expect(await routedNames(bob, "convert celsius to fahrenheit")).not.toContain("alice_converter");

    expect(await listedNames(alice)).toContain("alice_converter");
    expect(await routedNames(alice, "convert celsius to fahrenheit")).toContain("alice_converter");
    expect(JSON.parse((await alice.invoke("alice_converter", '{"celsius": 100}')).result?.stdout ?? "")).toEqual({ fahrenheit: 212 });

    // Bob's attempts changed nothing.
    expect((await alice.get("alice_converter")).skill).toMatchObject({
      version: 1,
      status: SkillStatus.SKILL_STATUS_ACTIVE,
      protected: false,
    });
  });

  it("names are global: registering another agent's name is refused and leaves that skill untouched", async () => {
    await register(alice, "taken_private");
    const taken = await rpcError(register(bob, "taken_private"));
    expect(taken.code).toBe(status.ALREADY_EXISTS);
    expect(taken.details).toBe('the name "taken_private" is taken by another agent\'s skill; choose another name');
    expect(taken.details).not.toContain("alice");

    await register(alice, "taken_public", { visibility: Visibility.VISIBILITY_PUBLIC });
    const denied = await rpcError(register(bob, "taken_public"));
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    expect(denied.details).toContain('belongs to agent "alice"');

    for (const name of ["taken_private", "taken_public"]) {
      expect((await alice.get(name)).skill).toMatchObject({ version: 1, owner: "alice" });
    }
  });

  it("a public skill is every agent's to see, route to and invoke, but only its owner's to change", async () => {
    await register(alice, "shared_converter", { description: "Turn Celsius degrees into Fahrenheit degrees for a weather report." });
    const published = await alice.call(alice.raw.setSkillVisibility, {
      name: "shared_converter",
      visibility: Visibility.VISIBILITY_PUBLIC,
    });
    expect(published.skill).toMatchObject({ owner: "alice", visibility: Visibility.VISIBILITY_PUBLIC });

    expect(await listedNames(bob)).toContain("shared_converter");
    expect((await bob.get("shared_converter")).code).toBe(CONVERTER);
    expect(await routedNames(bob, "celsius into fahrenheit for the weather report")).toContain("shared_converter");
    const invoked = await bob.invoke("shared_converter", '{"celsius": 0}');
    expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ fahrenheit: 32 });

    const changes = await outcomesOf(
      bob,
      "shared_converter",
      Object.keys(ATTEMPTS).filter((call) => !READS.includes(call)),
    );
    for (const call of ["patch", "rollback", "delete", "restore", "protect", "visibility"]) {
      expect({ call, code: changes[call]?.code }).toEqual({ call, code: status.PERMISSION_DENIED });
      expect(changes[call]?.details).toMatch(/it belongs to agent "alice"; only its owner or an admin can$/);
    }
    // Making it private again hides it from bob at once, in routing too.
    await alice.call(alice.raw.setSkillVisibility, { name: "shared_converter", visibility: Visibility.VISIBILITY_PRIVATE });
    expect((await rpcError(bob.get("shared_converter"))).code).toBe(status.NOT_FOUND);
    expect(await routedNames(bob, "celsius into fahrenheit for the weather report")).not.toContain("shared_converter");
  });

  it("another agent's route id credits nothing", async () => {
    await register(alice, "feedback_converter", { visibility: Visibility.VISIBILITY_PUBLIC });
    const routed = await route(alice, "convert celsius to fahrenheit");
    expect(routed.skills.map((s) => s.name)).toContain("feedback_converter");
    const byBob = await bob.call(bob.raw.recordRouteFeedback, { routeId: routed.routeId, name: "feedback_converter", success: true });
    expect(byBob.credited).toBe(false);
    const byAlice = await alice.call(alice.raw.recordRouteFeedback, { routeId: routed.routeId, name: "feedback_converter", success: true });
    expect(byAlice.credited).toBe(true);
  });

  it("an agent's retirement sweep covers its own skills only; an admin's covers all", async () => {
    await register(alice, "alice_flaky");
    for (let i = 0; i < 3; i++) await alice.invoke("alice_flaky", '{"fail": true}');
    expect((await alice.get("alice_flaky")).skill?.status).toBe(SkillStatus.SKILL_STATUS_DEGRADED);

    const bobSweep = await bob.call(bob.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(bobSweep.retired).toEqual([]);
    const aliceDryRun = await alice.call(alice.raw.retireDegradedSkills, { dryRun: true, force: false });
    expect(aliceDryRun.retired.map((r) => r.name)).toEqual(["alice_flaky"]);
    const opsSweep = await ops.call(ops.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(opsSweep.retired.map((r) => r.name)).toContain("alice_flaky");
    expect((await alice.get("alice_flaky")).skill?.status).toBe(SkillStatus.SKILL_STATUS_RETIRED);
  });

  it("an admin sees and manages every skill, transfers ownership, and alone may wipe the sandbox or rebuild indexes", async () => {
    await register(alice, "handed_over");
    expect(await listedNames(ops)).toEqual(expect.arrayContaining(["alice_converter", "handed_over"]));
    expect((await ops.get("handed_over")).skill?.owner).toBe("alice");
    await ops.call(ops.raw.setSkillProtected, { name: "handed_over", protected: true });

    const byAlice = await rpcError(alice.call(alice.raw.transferSkill, { name: "handed_over", newOwner: "bob" }));
    expect(byAlice.code).toBe(status.PERMISSION_DENIED);
    expect(byAlice.details).toMatch(/^TransferSkill is for admins; agent "alice" does not have the admin role/);
    const badOwner = await rpcError(ops.call(ops.raw.transferSkill, { name: "handed_over", newOwner: "not an agent" }));
    expect(badOwner.code).toBe(status.INVALID_ARGUMENT);

    const transferred = await ops.call(ops.raw.transferSkill, { name: "handed_over", newOwner: "bob" });
    expect(transferred.skill).toMatchObject({ owner: "bob", visibility: Visibility.VISIBILITY_PRIVATE, protected: true });
    expect((await bob.get("handed_over")).skill?.owner).toBe("bob");
    expect((await rpcError(alice.get("handed_over"))).code).toBe(status.NOT_FOUND);
    await bob.call(bob.raw.patchSkill, { name: "handed_over", find: "9 / 5", replace: "1.8", testPayload: "" });

    for (const client of [alice, bob]) {
      expect((await rpcError(client.call(client.raw.wipeSandbox, {}))).code).toBe(status.PERMISSION_DENIED);
      expect((await rpcError(client.call(client.raw.rebuildIndexes, {}))).code).toBe(status.PERMISSION_DENIED);
    }
    await ops.call(ops.raw.wipeSandbox, {});
    const rebuilt = await ops.call(ops.raw.rebuildIndexes, {});
    expect(rebuilt.skillsIndexed).toBe((await ops.list(true)).skills.length);
    expect(rebuilt.repairs).toEqual([]);
  });

  it("RebuildIndexes rewrites a canonical file that was removed behind the service's back", async () => {
    await register(alice, "repaired_converter");
    await rm(path.join(engine.home, "memory", "acquired_skills", "repaired_converter.py"));
    const rebuilt = await ops.call(ops.raw.rebuildIndexes, {});
    expect(rebuilt.repairs).toEqual(["repaired_converter: canonical file rewritten from v1 in its history"]);
    expect(await readFile(path.join(engine.home, "memory", "acquired_skills", "repaired_converter.py"), "utf8")).toBe(CONVERTER);
  });

  it("rejects a visibility the API does not define", async () => {
    const error = await rpcError(alice.call(alice.raw.setSkillVisibility, { name: "alice_converter", visibility: 0 }));
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toBe(
      "visibility: must be VISIBILITY_PRIVATE or VISIBILITY_PUBLIC (a skill becomes internal by GrantSkill, not by asking)",
    );
    // Internal is what grants make a skill, never a request.
    const internal = await rpcError(
      alice.call(alice.raw.setSkillVisibility, { name: "alice_converter", visibility: Visibility.VISIBILITY_INTERNAL }),
    );
    expect(internal.code).toBe(status.INVALID_ARGUMENT);
    const odd = await rpcError(register(alice, "odd_visibility", { visibility: 7 as Visibility }));
    expect(odd.code).toBe(status.INVALID_ARGUMENT);
  });

  it("owner and visibility survive a restart and are written to the mirror file", async () => {
    const mirror = await readMirrorSkills<{ name: string; owner: string; visibility: string }>(engine.home);
    expect(mirror.find((s) => s.name === "taken_public")).toMatchObject({ owner: "alice", visibility: "public" });
    expect(mirror.find((s) => s.name === "handed_over")).toMatchObject({ owner: "bob", visibility: "private" });

    await engine.stop();
    engine = await startTestEngine({
      dirs: { root: path.dirname(engine.home), home: engine.home, sandboxDir: engine.sandboxDir },
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},ops:admin=${TOKENS.ops}` },
    });
    for (const client of [alice, bob, ops, anonymous]) client.close();
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    ops = connect(engine.app.port, TOKENS.ops);
    anonymous = connect(engine.app.port);
    expect((await rpcError(bob.get("alice_converter"))).code).toBe(status.NOT_FOUND);
    expect((await alice.get("alice_converter")).skill?.owner).toBe("alice");
    expect((await bob.get("taken_public")).skill?.visibility).toBe(Visibility.VISIBILITY_PUBLIC);
  });
});

describe("without tokens the embedded default is one local agent", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("runs every call as the local agent with the admin role, token or not", async () => {
    expect(await engine.client.call(engine.client.raw.whoAmI, {})).toEqual({ agentId: "local", admin: true, authenticated: false });
    const withToken = connect(engine.app.port, "any-token-at-all-0123");
    try {
      expect((await withToken.call(withToken.raw.whoAmI, {})).agentId).toBe("local");
    } finally {
      withToken.close();
    }
    const registered = await engine.client.register({ name: "local_skill", code: "print('hi')" });
    expect(registered.skill).toMatchObject({ owner: "local", visibility: Visibility.VISIBILITY_PRIVATE });
  });
});
