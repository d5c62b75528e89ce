import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GetSkillStatsRequest, GetSkillStatsResponse } from "../src/gen/skillengine/v1/skills.js";
import {
  containersOf,
  docker,
  infrastructureFaults,
  rpcError,
  runsCleanedUp,
  startTestEngine,
  type TestEngine,
  whileItsContainerRuns,
} from "./support/test-engine.js";

const SLEEPER = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("s", 0))
print(json.dumps({"slept": args.get("s", 0)}))
`;

/**
 * An operator (or another tool on the host) kills or removes a run's container while it runs:
 * the fault is the infrastructure's, not the skill's (docs/skill-lifecycle.md#what-counts-against-a-skill).
 * Cold runs only, so that the container the test finds is the run's own.
 */
describe("a run's container killed or removed from outside", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: "off", SKILL_ENGINE_TIMEOUT_MS: "60000" } });
    await engine.client.register({ name: "sleeper", code: SLEEPER, testPayload: "{}" });
    await runsCleanedUp(engine);
  }, 120_000);

  afterAll(async () => {
    await engine?.dispose();
  });

  const record = async () => {
    const stats = await engine.client.call<GetSkillStatsRequest, GetSkillStatsResponse>(engine.client.raw.getSkillStats, {
      name: "sleeper",
    });
    return { usageCount: stats.skill?.usageCount, failureCount: stats.skill?.failureCount, windowSamples: stats.windowSamples };
  };

  for (const [how, act] of [
    ["docker kill", (id: string) => docker.getContainer(id).kill()],
    ["docker rm -f", (id: string) => docker.getContainer(id).remove({ force: true })],
  ] as const) {
    it(`${how}: the call answers UNAVAILABLE naming it, no count moves, the fault is counted apart, nothing is left`, async () => {
      const before = await record();
      const faultsBefore = (await infrastructureFaults(engine))["container-lost"] ?? 0;
      const { call } = await whileItsContainerRuns(engine.instanceTag, () => engine.client.invoke("sleeper", '{"s": 30}', 90_000));
      const [running] = await containersOf(engine.instanceTag);
      expect(running).toBeDefined();
      await act(running?.Id as string);

      const error = await rpcError(call);
      expect(error.code, error.details).toBe(status.UNAVAILABLE);
      expect(error.details).toMatch(/from outside.*not the skill's/);
      expect(await record()).toEqual(before);
      expect((await infrastructureFaults(engine))["container-lost"]).toBe(faultsBefore + 1);
      await runsCleanedUp(engine);

      // The skill itself is fine: the next run succeeds.
      expect((await engine.client.invoke("sleeper", '{"s": 0}')).result?.success).toBe(true);
      await runsCleanedUp(engine);
    }, 120_000);
  }
});
