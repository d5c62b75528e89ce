import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import {
  connect,
  containersOf,
  queueDepth,
  rpcError,
  startTestEngine,
  type TestEngine,
  whileItsContainerRuns,
} from "./support/test-engine.js";

const SLEEPER = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("sleep", 0))
print("slept", args.get("sleep", 0))
`;

/** Waits until the engine reports no container of this instance (removal is asynchronous to the RPC answer). */
async function expectNoContainers(instanceTag: string): Promise<void> {
  await eventually("every sandbox container to be removed", async () =>
    (await containersOf(instanceTag)).length === 0 ? true : undefined,
  );
}

describe("deadlines, cancellation and shutdown reach the container", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    // Runs here sleep 600 s, far within this limit: only the deadline, the cancellation or the
    // shutdown under test can stop them, long before their sleep or the limit would.
    engine = await startTestEngine({ env: { SKILL_ENGINE_TIMEOUT_MS: "900000" } });
    await engine.client.register({ name: "sleeper", code: SLEEPER });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("a call whose deadline passes answers DEADLINE_EXCEEDED and its container is removed", async () => {
    // The deadline leaves a loaded machine ample time to start the container first: it then stops a running skill.
    const { call } = await whileItsContainerRuns(engine.instanceTag, () => engine.client.invoke("sleeper", '{"sleep": 600}', 15_000));
    const error = await rpcError(call);
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    await expectNoContainers(engine.instanceTag);
    const { skill } = await engine.client.get("sleeper");
    expect(skill?.failureCount).toBe(0);
  });

  it("a client that cancels stops its run and its container", async () => {
    const { call } = await whileItsContainerRuns(engine.instanceTag, async () =>
      engine.client.raw.invokeSkill(
        { name: "sleeper", payload: '{"sleep": 600}', payloadJson: undefined, routeId: "", files: [] },
        () => undefined,
      ),
    );
    (await call).cancel();
    await expectNoContainers(engine.instanceTag);
    expect((await engine.client.invoke("sleeper", '{"sleep": 0}')).result?.success).toBe(true);
  });

  it("a full queue answers RESOURCE_EXHAUSTED with a message that says so", async () => {
    const small = await startTestEngine({
      env: { SKILL_ENGINE_MAX_CONCURRENT_RUNS: "1", SKILL_ENGINE_MAX_QUEUED_RUNS: "1" },
    });
    try {
      await small.client.register({ name: "sleeper", code: SLEEPER });
      const { call: first } = await whileItsContainerRuns(small.instanceTag, () => small.client.invoke("sleeper", '{"sleep": 2}'));
      const second = small.client.invoke("sleeper", '{"sleep": 0}');
      // The third call comes once the second waits in the queue, as the service itself reports.
      await eventually("the second call to wait in the queue", async () => ((await queueDepth(small)) === 1 ? true : undefined), {
        intervalMs: 25,
      });
      const third = await rpcError(small.client.invoke("sleeper", '{"sleep": 0}'));
      expect(third.code).toBe(status.RESOURCE_EXHAUSTED);
      expect(third.details).toMatch(/queue is full/);
      expect((await first).result?.success).toBe(true);
      expect((await second).result?.success).toBe(true);
    } finally {
      await small.dispose();
    }
  });

  it("shutting the service down stops runs in flight with UNAVAILABLE and leaves no container", async () => {
    const doomed = await startTestEngine({ env: { SKILL_ENGINE_TIMEOUT_MS: "900000" } });
    await doomed.client.register({ name: "sleeper", code: SLEEPER });
    const client = connect(doomed.app.port);
    const { call: inFlight } = await whileItsContainerRuns(doomed.instanceTag, () => rpcError(client.invoke("sleeper", '{"sleep": 600}')));
    await doomed.stop();
    const error = await inFlight;
    expect(error.code).toBe(status.UNAVAILABLE);
    client.close();
    await expectNoContainers(doomed.instanceTag);
    await doomed.dispose();
  });
});
