import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { eventually } from "./support/poll.js";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/** Succeeds unless the payload says {"fail": true}: outcomes are under the test's control. */
const FLAKY = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print(json.dumps({"ok": True}))
`;
const SCHEMA = '{"type":"object","properties":{"city":{"type":"string"},"fail":{"type":"boolean"}}}';
const ok = '{"fail": false}';
const bad = '{"fail": true}';

describe("retirement by itself (docs/skill-lifecycle.md#retirement-rule): the default sweep, degraded skills below healthy ones", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    // An empty value is the default: the sweep every minute, as a fresh install runs it.
    engine = await startTestEngine({ env: { SKILL_ENGINE_RETIRE_SWEEP_MINUTES: "" } });
    await engine.client.register({
      name: "weather_forecast",
      description: "Get the weather forecast (temperature, rain, wind) for a city for the next days.",
      code: FLAKY,
      parametersSchema: SCHEMA,
      testPayload: ok,
    });
    await engine.client.register({
      name: "city_outlook",
      description: "Describes what a city is like to visit: sights, seasons and neighbourhoods.",
      code: FLAKY,
      parametersSchema: SCHEMA,
      testPayload: ok,
    });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  const route = (query: string) =>
    engine.client.call(engine.client.raw.routeSkills, {
      query,
      limit: 2,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_FUSED,
      minRelevance: 0,
    });
  const query = "weather forecast for Lisbon: will it rain, how warm, how windy";

  it("ranks a degraded skill below a healthy one, with its warning, until the sweep retires it within a minute; then it leaves routes", async () => {
    expect(engine.config.retireSweepMinutes).toBe(1);
    expect((await route(query)).skills.map((s) => s.name)).toEqual(["weather_forecast", "city_outlook"]);
    for (let i = 0; i < 3; i++) await engine.client.invoke("weather_forecast", bad);
    const degraded = (await route(query)).skills;
    expect(degraded.map((s) => s.name)).toEqual(["city_outlook", "weather_forecast"]);
    expect(degraded[1]).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEGRADED });
    expect(degraded[1]?.warnings).toContain("degraded: 3 consecutive failed invocations");
    expect(degraded[0]?.warnings).toEqual([]);
    // Nobody calls RetireDegradedSkills: the default sweep (every minute) does it.
    const retired = await eventually(
      "the default sweep to retire the degraded skill",
      async () => {
        const skill = (await engine.client.get("weather_forecast")).skill;
        return skill?.status === SkillStatus.SKILL_STATUS_RETIRED ? skill : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(retired.statusReason).toBe("failure_count 3 ≥ 3");
    expect((await engine.client.get("city_outlook")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    expect((await route(query)).skills.map((s) => s.name)).toEqual(["city_outlook"]);
  }, 360_000);
});

describe("agents' verdicts reach failure_count (docs/learning.md#outcomes-and-the-streak)", () => {
  const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01" };
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    // A window of 5, so that five verdicts are judged; everything else is the default.
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`, SKILL_ENGINE_WINDOW_SIZE: "5" },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
  });
  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  const register = (client: TestClient, name: string) =>
    client.register({ name, code: FLAKY, parametersSchema: SCHEMA, testPayload: ok, visibility: Visibility.VISIBILITY_PUBLIC });
  const useAndReport = async (client: TestClient, name: string, success: boolean) => {
    const invoked = await client.invoke(name, ok);
    expect(invoked.result?.success).toBe(true);
    return client.call(client.raw.recordSkillOutcome, { name, invocationId: invoked.invocationId, success, note: "did not help" });
  };

  it("five 'did not help' in a row on runs that exit 0: degraded at 3, deprecated by the window, retired by the retirement rule", async () => {
    await register(alice, "unhelpful");
    for (let i = 1; i <= 5; i++) {
      const reported = await useAndReport(alice, "unhelpful", false);
      expect(reported.skill?.failureCount).toBe(i);
      if (i === 3) expect(reported.skill?.status).toBe(SkillStatus.SKILL_STATUS_DEGRADED);
    }
    const skill = (await alice.get("unhelpful")).skill;
    expect(skill).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEPRECATED, failureCount: 5, usageCount: 5 });
    const stats = await alice.call(alice.raw.getSkillStats, { name: "unhelpful" });
    expect(stats.lastOutcome).toMatchObject({ source: "explicit", success: false, reporter: "alice" });
    const retired = await alice.call(alice.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(retired.retired.map((r) => [r.name, r.reasons])).toEqual([
      ["unhelpful", ["failure_count 5 ≥ 3", "failure_count 5 ≥ 5 and usage_count 5 < 10"]],
    ]);
    expect((await alice.get("unhelpful")).skill?.status).toBe(SkillStatus.SKILL_STATUS_RETIRED);
  });

  it("a success verdict ends the streak; an exit code's verdict stands until a report replaces it; last_outcome follows", async () => {
    await register(alice, "mixed");
    await useAndReport(alice, "mixed", false);
    await useAndReport(alice, "mixed", false);
    const invoked = await alice.invoke("mixed", ok);
    // The run's own verdict (exit 0 with output) resets the streak until the agent says otherwise.
    expect((await alice.get("mixed")).skill?.failureCount).toBe(0);
    expect((await alice.call(alice.raw.getSkillStats, { name: "mixed" })).lastOutcome).toMatchObject({
      source: "exit_code",
      success: true,
    });
    const helped = await alice.call(alice.raw.recordSkillOutcome, {
      name: "mixed",
      invocationId: invoked.invocationId,
      success: true,
      note: "",
    });
    expect(helped.skill?.failureCount).toBe(0);
    const changedMind = await alice.call(alice.raw.recordSkillOutcome, {
      name: "mixed",
      invocationId: invoked.invocationId,
      success: false,
      note: "",
    });
    expect(changedMind.skill).toMatchObject({ failureCount: 3, status: SkillStatus.SKILL_STATUS_DEGRADED });
  });

  it("another agent's verdicts never move the owner's streak (docs/learning.md#whose-reports-count)", async () => {
    await register(alice, "shared");
    for (let i = 0; i < 3; i++) await useAndReport(bob, "shared", false);
    expect((await alice.get("shared")).skill).toMatchObject({ failureCount: 0, status: SkillStatus.SKILL_STATUS_ACTIVE });
  });
});

describe("retirement clause 2 through the server (docs/skill-lifecycle.md#retirement-rule)", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    // Clause 1 set above clause 2, so clause 2 alone decides: failure_count ≥ 5 AND usage_count < 10.
    engine = await startTestEngine({
      env: { SKILL_ENGINE_RETIRE_AT_FAILURES: "8", SKILL_ENGINE_RETIRE_AT_FAILURES_LOW_USAGE: "5", SKILL_ENGINE_LOW_USAGE_BELOW: "10" },
    });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  const register = (name: string) => engine.client.register({ name, code: FLAKY, parametersSchema: SCHEMA, testPayload: ok });
  const run = async (name: string, successes: number, failures: number) => {
    for (let i = 0; i < successes; i++) await engine.client.invoke(name, ok);
    for (let i = 0; i < failures; i++) await engine.client.invoke(name, bad);
  };

  it("retires a little-used skill with 5 failures in a row, spares a well-used one and one with 4", async () => {
    await register("rarely_used");
    await register("well_used");
    await register("four_failures");
    await run("rarely_used", 2, 5);
    await run("well_used", 10, 5);
    await run("four_failures", 2, 4);
    const sweep = await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(sweep.retired.map((r) => [r.name, r.reasons])).toEqual([["rarely_used", ["failure_count 5 ≥ 5 and usage_count 2 < 10"]]]);
    expect((await engine.client.get("rarely_used")).skill?.statusReason).toBe("failure_count 5 ≥ 5 and usage_count 2 < 10");
    expect((await engine.client.get("well_used")).skill).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEGRADED, failureCount: 5 });
    expect((await engine.client.get("four_failures")).skill).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEGRADED, failureCount: 4 });
  });
});
