import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/** Succeeds unless the payload says {"fail": true}: outcomes are under the test's control. */
const FLAKY = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print(json.dumps({"ok": True}))
`;
const SCHEMA = '{"type":"object","properties":{"item":{"type":"string"},"fail":{"type":"boolean"}}}';
const ok = '{"fail": false}';
const bad = '{"fail": true}';
const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01" };

/** Routing's quality filter per version (docs/routing.md#quality-filter) and the warnings a route carries. */
describe("routing's quality counters belong to the active version, and ResetSkillQuality clears them", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`, SKILL_ENGINE_WINDOW_SIZE: "4" },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    await alice.register({
      name: "catalog_price",
      description: "Looks up the current price of a product in the shop's catalog.",
      code: FLAKY,
      parametersSchema: SCHEMA,
      testPayload: ok,
      visibility: Visibility.VISIBILITY_PUBLIC,
    });
  });
  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  const QUERY = "what is the price of this product in the catalog";
  const route = (client: TestClient, query = QUERY) =>
    client.call(client.raw.routeSkills, {
      query,
      limit: 5,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_FUSED,
      minRelevance: 0,
    });
  const routed = async (name: string): Promise<boolean> => (await route(alice)).skills.some((s) => s.name === name);
  /** Two routed invocations that fail: the quality filter's threshold. */
  const failTwiceThroughRoutes = async (): Promise<void> => {
    for (let i = 0; i < 2; i++) {
      const { routeId, skills } = await route(alice);
      expect(skills.map((s) => s.name)).toContain("catalog_price");
      expect((await alice.invoke("catalog_price", bad, undefined, routeId)).result?.success).toBe(false);
    }
  };

  it("a new version (patch) starts its own counters: the dropped skill is routed again", async () => {
    await failTwiceThroughRoutes();
    expect(await routed("catalog_price")).toBe(false);
    const patched = await alice.call(alice.raw.patchSkill, {
      name: "catalog_price",
      find: '"ok": True',
      replace: '"ok": True, "v": 2',
      testPayload: "",
    });
    expect(patched.skill?.version).toBe(2);
    expect(await routed("catalog_price")).toBe(true);
    const stats = await alice.call(alice.raw.getSkillStats, { name: "catalog_price" });
    // Only the route just made counts for version 2.
    expect(stats).toMatchObject({ selections: 1, applied: 0, completions: 0 });
  });

  it("ResetSkillQuality (owner or admin) clears them and says what they were; another agent is refused", async () => {
    await failTwiceThroughRoutes();
    expect(await routed("catalog_price")).toBe(false);
    const denied = await rpcError(bob.call(bob.raw.resetSkillQuality, { name: "catalog_price" }));
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    expect((await rpcError(alice.call(alice.raw.resetSkillQuality, { name: "no_such_skill" }))).code).toBe(status.NOT_FOUND);
    const reset = await alice.call(alice.raw.resetSkillQuality, { name: "catalog_price" });
    expect(reset).toMatchObject({ routedSelections: 2, routedCompletions: 0, applied: 2, completions: 0 });
    expect(reset.skill?.name).toBe("catalog_price");
    expect(await routed("catalog_price")).toBe(true);
  });

  it("a rollback starts the rolled-back-to version's counters afresh", async () => {
    await failTwiceThroughRoutes();
    expect(await routed("catalog_price")).toBe(false);
    await alice.call(alice.raw.rollbackSkill, { name: "catalog_price", version: 1 });
    expect(await routed("catalog_price")).toBe(true);
  });

  it("RouteSkills carries the low-reliability and degraded warnings of a protected skill (docs/routing.md#degraded-skills)", async () => {
    await alice.register({
      name: "stock_level",
      description: "Reports how many units of a product are in stock in the warehouse.",
      code: FLAKY,
      parametersSchema: SCHEMA,
      testPayload: ok,
    });
    await alice.call(alice.raw.setSkillProtected, { name: "stock_level", protected: true });
    // By name, not through routes: 1 success, 3 failures, a window of 4 → 25%, and a streak of 3.
    for (const payload of [ok, bad, bad, bad]) await alice.invoke("stock_level", payload);
    const hit = (await route(alice, "how many units of this product are in stock")).skills.find((s) => s.name === "stock_level");
    expect(hit?.status).toBe(SkillStatus.SKILL_STATUS_DEGRADED);
    expect(hit?.hasSuccessRate).toBe(true);
    expect(hit?.successRate).toBeCloseTo(0.25);
    expect(hit?.warnings).toEqual([
      "low reliability: success rate 25% over the last 4 invocations is below 40%",
      "degraded: 3 consecutive failed invocations",
    ]);
  });
});
