import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_INSTANCE, LABEL_MANAGED } from "../src/execution/index.js";
import type { GetSkillStatsRequest, GetSkillStatsResponse } from "../src/gen/skillengine/v1/skills.js";
import { type HealthProbe, healthProbe } from "./support/health-client.js";
import { eventually } from "./support/poll.js";
import { type SecondDockerEngine, startSecondDockerEngine } from "./support/second-docker-engine.js";
import {
  containersOf,
  infrastructureFaults,
  rpcError,
  runsInFlight,
  startTestEngine,
  type TestEngine,
  warmIdle,
} from "./support/test-engine.js";

const IMAGE = "skill-engine-sandbox:latest";

const SLEEPER = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("s", 0))
print(json.dumps({"slept": args.get("s", 0)}))
`;

const DOUBLER = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"doubled": args.get("x", 0) * 2}))
`;

/** What the outage must not change: a skill's counts, window and status. */
async function record(engine: TestEngine, name: string): Promise<Record<string, unknown>> {
  const stats = await engine.client.call<GetSkillStatsRequest, GetSkillStatsResponse>(engine.client.raw.getSkillStats, { name });
  return {
    status: stats.skill?.status,
    usageCount: stats.skill?.usageCount,
    failureCount: stats.skill?.failureCount,
    windowSamples: stats.windowSamples,
    windowSuccesses: stats.windowSuccesses,
    totalInvocations: stats.totalInvocations,
  };
}

/**
 * The Docker engine is stopped (SIGTERM, as `systemctl stop docker` does) while invocations run,
 * then started again. On an engine of the test's own: the shared one serves other suites.
 */
describe("a Docker engine restart while skills run", () => {
  let dockerd: SecondDockerEngine;
  let engine: TestEngine;
  let health: HealthProbe;

  beforeAll(async () => {
    dockerd = await startSecondDockerEngine(IMAGE);
    engine = await startTestEngine({
      env: {
        DOCKER_HOST: dockerd.dockerHost,
        SKILL_ENGINE_ENGINE_PROBE_MS: "200",
        SKILL_ENGINE_SANDBOX_SWEEP_SECONDS: "1",
        SKILL_ENGINE_POOL: "on",
        SKILL_ENGINE_POOL_SIZE: "2",
        SKILL_ENGINE_TIMEOUT_MS: "60000",
      },
    });
    health = healthProbe(engine.app.port);
    await eventually("health to say SERVING", async () => ((await health.check()) === "SERVING" ? true : undefined));
  }, 120_000);
  afterAll(async () => {
    health?.close();
    await engine?.dispose();
    await dockerd?.dispose();
  }, 120_000);

  it("answers UNAVAILABLE for the runs cut off, changes no skill's record, serves again and leaves no container", async () => {
    await engine.client.register({ name: "sleeper", code: SLEEPER, testPayload: "{}" });
    await engine.client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' });
    for (let x = 0; x < 3; x++) await engine.client.invoke("doubler", JSON.stringify({ x }));
    await engine.client.invoke("sleeper", "{}");
    const before = { sleeper: await record(engine, "sleeper"), doubler: await record(engine, "doubler") };

    // Four runs in flight (the pool's two warm containers and two cold ones), then the engine stops.
    const cutOff = [1, 2, 3, 4].map(() => rpcError(engine.client.invoke("sleeper", JSON.stringify({ s: 120 }))));
    await eventually("four runs in flight", async () => ((await runsInFlight(engine)) === 4 ? true : undefined));
    await eventually("the four containers to run", async () => {
      const running = await dockerd.docker.listContainers({ filters: { label: [`${LABEL_MANAGED}=true`], status: ["running"] } });
      return running.length >= 4 ? true : undefined;
    });
    await dockerd.stop();

    for (const error of await Promise.all(cutOff)) {
      expect(error.code, error.details).toBe(status.UNAVAILABLE);
      expect(error.details).toMatch(/not the skill's/);
    }
    await eventually("health to say NOT_SERVING", async () => ((await health.check()) === "NOT_SERVING" ? true : undefined));
    const refused = await rpcError(engine.client.invoke("doubler", '{"x": 5}'));
    expect(refused.code).toBe(status.UNAVAILABLE);

    // Nothing of the outage is the skills': no count, window or status moved.
    expect(await record(engine, "sleeper")).toEqual(before.sleeper);
    expect(await record(engine, "doubler")).toEqual(before.doubler);
    const faults = await infrastructureFaults(engine);
    expect(Object.values(faults).reduce((sum, n) => sum + n, 0)).toBeGreaterThanOrEqual(5);

    // The same process serves again once the engine is back.
    await dockerd.start();
    await eventually("health to say SERVING again", async () => ((await health.check()) === "SERVING" ? true : undefined));
    const slept = await engine.client.invoke("sleeper", '{"s": 0}');
    expect(slept.result?.success).toBe(true);
    const doubled = await engine.client.invoke("doubler", '{"x": 21}');
    expect(JSON.parse(doubled.result?.stdout ?? "")).toEqual({ doubled: 42 });
    expect(await record(engine, "doubler")).toMatchObject({
      usageCount: (before.doubler.usageCount as number) + 1,
      failureCount: before.doubler.failureCount,
    });

    // What the stop left behind (the killed runs' and the warm pool's containers) is gone: what
    // remains is exactly the refilled warm pool, all running.
    await eventually("only the warm pool's containers to remain", async () => {
      const ours = await containersOf(engine.instanceTag, dockerd.docker);
      const idle = await warmIdle(engine);
      return ours.length === idle && ours.every((c) => c.State === "running") ? true : undefined;
    });
    await engine.stop();
    expect(await containersOf(engine.instanceTag, dockerd.docker)).toEqual([]);
  }, 240_000);
});

describe("the periodic sandbox sweep", () => {
  let dockerd: SecondDockerEngine;
  let engine: TestEngine;

  beforeAll(async () => {
    dockerd = await startSecondDockerEngine(IMAGE);
    engine = await startTestEngine({
      env: { DOCKER_HOST: dockerd.dockerHost, SKILL_ENGINE_ENGINE_PROBE_MS: "200", SKILL_ENGINE_SANDBOX_SWEEP_SECONDS: "1" },
    });
  }, 120_000);
  afterAll(async () => {
    await engine?.dispose();
    await dockerd?.dispose();
  }, 120_000);

  it("removes containers of this instance that no run tracks (running or only created), and never one a run is using", async () => {
    await engine.client.register({ name: "sleeper", code: SLEEPER, testPayload: "{}" });
    // A leak from any path: a container with this instance's labels that no run of the service made.
    const leaked = await dockerd.docker.createContainer({
      Image: IMAGE,
      Cmd: ["python3", "-c", "import time; time.sleep(600)"],
      Labels: { [LABEL_MANAGED]: "true", [LABEL_INSTANCE]: engine.instanceTag },
      HostConfig: { NetworkMode: "none" },
    });
    await leaked.start();
    // And one created but never started, as a create is left when the engine goes away before the start.
    const created = await dockerd.docker.createContainer({
      Image: IMAGE,
      Cmd: ["true"],
      Labels: { [LABEL_MANAGED]: "true", [LABEL_INSTANCE]: engine.instanceTag },
      HostConfig: { NetworkMode: "none" },
    });
    const running = engine.client.invoke("sleeper", '{"s": 3}');
    await eventually("the leaked containers to be swept", async () => {
      const ids = (await containersOf(engine.instanceTag, dockerd.docker)).map((c) => c.Id);
      return ids.includes(leaked.id) || ids.includes(created.id) ? undefined : true;
    });
    // The run that was in flight during the sweeps finished as the skill meant.
    const { result } = await running;
    expect(result?.success).toBe(true);
    expect(JSON.parse(result?.stdout ?? "")).toEqual({ slept: 3 });
    await eventually("no container of this instance to remain", async () =>
      (await containersOf(engine.instanceTag, dockerd.docker)).length === 0 ? true : undefined,
    );
  }, 120_000);
});
