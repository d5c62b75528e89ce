import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/**
 * Whose outcome reports count (docs/learning.md#whose-reports-count), through the real server with
 * several agents: one agent's verdicts on another's public skill steer its own routes only; the
 * shared status follows the owner's verdicts, the engine's exit codes, and verdicts that several
 * distinct agents agree on.
 */
const TOKENS = {
  alice: "alice-0123456789abcdef",
  bob: "bob-0123456789abcdef01",
  mallory: "mallory-0123456789abcd",
  carol: "carol-0123456789abcdef",
  dave: "dave-0123456789abcdef0",
};

const CONVERTER = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"fahrenheit": args.get("celsius", 0) * 9 / 5 + 32}))
`;
const SCHEMA = '{"type":"object","properties":{"celsius":{"type":"number"}}}';
const QUERY = "convert a temperature from celsius to fahrenheit";

describe("outcome reports cannot sabotage another agent's skill (real server, real sandbox)", () => {
  let engine: TestEngine;
  const clients: Record<keyof typeof TOKENS, TestClient> = {} as Record<keyof typeof TOKENS, TestClient>;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_TOKENS: Object.entries(TOKENS)
          .map(([agent, token]) => `${agent}=${token}`)
          .join(","),
      },
    });
    for (const [agent, token] of Object.entries(TOKENS)) clients[agent as keyof typeof TOKENS] = connect(engine.app.port, token);
    await clients.bob.register({
      name: "bob_convert",
      code: CONVERTER,
      parametersSchema: SCHEMA,
      testPayload: '{"celsius": 100}',
      description: "Convert a temperature from degrees Celsius to degrees Fahrenheit.",
      visibility: Visibility.VISIBILITY_PUBLIC,
    });
  }, 120_000);
  afterAll(async () => {
    for (const client of Object.values(clients)) client.close();
    await engine?.dispose();
  });

  const routedNames = async (client: TestClient) =>
    (
      await client.call(client.raw.routeSkills, {
        query: QUERY,
        limit: 10,
        format: ToolFormat.TOOL_FORMAT_OPENAI,
        mode: RouteMode.ROUTE_MODE_FUSED,
      })
    ).skills.map((s) => s.name);

  /** `count` successful invocations of `name` by `client` (four at a time), then a failure verdict on each. */
  async function invokeAndReportFailures(client: TestClient, name: string, count: number): Promise<void> {
    const ids: string[] = [];
    for (let done = 0; done < count; done += 4) {
      const runs = await Promise.all(
        Array.from({ length: Math.min(4, count - done) }, () => client.invoke(name, '{"celsius": 10}', 60_000)),
      );
      for (const run of runs) {
        expect(run.result?.success).toBe(true);
        ids.push(run.invocationId);
      }
    }
    for (const invocationId of ids) {
      const recorded = await client.call(client.raw.recordSkillOutcome, { name, invocationId, success: false, note: "did not help" });
      expect(recorded.overridden).toBe(true);
    }
  }
  const statusOf = async (name: string) => (await clients.alice.get(name)).skill?.status;

  it("mallory's 20 failure reports on bob's public skill leave it active and in alice's routes, and out of mallory's own", async () => {
    expect(await routedNames(clients.mallory)).toContain("bob_convert");
    await invokeAndReportFailures(clients.mallory, "bob_convert", 20);

    expect(await statusOf("bob_convert")).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    const stats = await clients.alice.call(clients.alice.raw.getSkillStats, { name: "bob_convert" });
    expect(stats).toMatchObject({ hasSuccessRate: true, successRate: 1, windowSamples: 20 });
    expect(stats.skill?.warning).toBe("");
    expect(await routedNames(clients.alice)).toContain("bob_convert");
    expect(await routedNames(clients.mallory)).not.toContain("bob_convert");
    // Still invocable by name for mallory: only its routes changed.
    expect((await clients.mallory.invoke("bob_convert", '{"celsius": 0}')).result?.success).toBe(true);
  }, 300_000);

  it("when three distinct agents report failures, the shared window counts them and the skill is deprecated for everyone", async () => {
    await invokeAndReportFailures(clients.carol, "bob_convert", 1);
    // Two agents do not make a quorum.
    expect(await statusOf("bob_convert")).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    await invokeAndReportFailures(clients.dave, "bob_convert", 1);
    expect(await statusOf("bob_convert")).toBe(SkillStatus.SKILL_STATUS_DEPRECATED);
    expect(await routedNames(clients.alice)).not.toContain("bob_convert");
  }, 120_000);

  it("the owner's own failure reports count at once, as the health rules say", async () => {
    await clients.bob.register({
      name: "bob_tally",
      code: `import json, sys\nprint(json.dumps({"n": len(json.loads(sys.argv[1]).get("items", []))}))\n`,
      parametersSchema: '{"type":"object","properties":{"items":{"type":"array"}}}',
      testPayload: '{"items": [1, 2]}',
      description: "Count how many items a list holds.",
      visibility: Visibility.VISIBILITY_PUBLIC,
    });
    const ids: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const runs = await Promise.all([0, 1, 2, 3].map(() => clients.bob.invoke("bob_tally", '{"items": [1]}', 60_000)));
      ids.push(...runs.map((r) => r.invocationId));
    }
    // 15 failures and 5 exit-0 successes in the window: 25%, below 30%.
    for (const invocationId of ids.slice(0, 15)) {
      await clients.bob.call(clients.bob.raw.recordSkillOutcome, { name: "bob_tally", invocationId, success: false, note: "" });
    }
    expect(await statusOf("bob_tally")).toBe(SkillStatus.SKILL_STATUS_DEPRECATED);
  }, 300_000);
});
