import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { status, type ServiceError } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import { containersOf, rpcError, runsCleanedUp, startTestEngine, type TestEngine, whileItsContainerRuns } from "./support/test-engine.js";

const echoSkill = (tag: string) => `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("sleep", 0))
print(json.dumps({"skill": "${tag}", "n": args.get("n")}))
`;

/**
 * Sleeps, then reads its own file from its run directory: a wipe meanwhile makes it fail. The sleep
 * leaves a loaded machine ample time to see the container run and wipe before the read.
 */
const READS_ITS_RUN_DIR_LATE = `import json, sys, time
time.sleep(5)
print(json.dumps({"lines": len(open("/sandbox/skill.py").read().splitlines())}))
`;

describe("wiping the sandbox directory loses no skill", () => {
  let engine: TestEngine;
  const names = ["wipe_alpha", "wipe_beta", "wipe_gamma"];

  beforeAll(async () => {
    engine = await startTestEngine();
    for (const name of names) await engine.client.register({ name, code: echoSkill(name) });
    await engine.client.register({ name: "wipe_late_reader", code: READS_ITS_RUN_DIR_LATE });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("every skill still invokes after rm -rf of the whole sandbox dir between registration and invocation", async () => {
    await wipe(engine.sandboxDir);
    for (const name of names) {
      const { result } = await engine.client.invoke(name, '{"n": 1}');
      expect(result).toMatchObject({ success: true, stdout: `{"skill": "${name}", "n": 1}\n` });
    }
  });

  it("a run known to be in flight when the wipe happens answers UNAVAILABLE, and the skill is not blamed", async () => {
    const call = engine.client.invoke("wipe_late_reader");
    // The run is in flight once its container runs (the skill then sleeps before it reads its file).
    await eventually("the run's container to be running", async () =>
      (await containersOf(engine.instanceTag)).some(
        (c) => c.Labels["io.skill-engine.skill"] === "wipe_late_reader" && c.State === "running",
      )
        ? true
        : undefined,
    );
    await wipe(engine.sandboxDir);
    const error = await rpcError(call);
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toBe("the sandbox directory was wiped while this run was in flight, so its result is not the skill's; retry");
    const { skill } = await engine.client.get("wipe_late_reader");
    expect(skill?.failureCount).toBe(0);
    expect((await engine.client.invoke("wipe_late_reader")).result).toMatchObject({ success: true, stdout: '{"lines": 3}\n' });
  });

  it("a wipe caught half-way (the run's file unlinked, its directory not yet) is a wipe, not the skill's failure", async () => {
    const { call, runId } = await whileItsContainerRuns(engine.instanceTag, () => engine.client.invoke("wipe_late_reader"));
    // What `rm -rf` leaves between its two steps for a directory: the files gone, the directory still there.
    await rm(path.join(engine.sandboxDir, "runs", runId, "skill.py"));
    const error = await rpcError(call);
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(/sandbox directory was wiped/);
    expect((await engine.client.get("wipe_late_reader")).skill?.failureCount).toBe(0);
  });

  it("a wipe during a burst fails at most the runs it cut off, with a clear UNAVAILABLE, and blames no skill", async () => {
    const burst = Array.from({ length: 12 }, (_, i) =>
      engine.client.invoke(names[i % names.length] as string, JSON.stringify({ n: i, sleep: 0.3 })),
    );
    const settled = Promise.allSettled(burst);
    // Wipe repeatedly while the burst is in flight: before, during and after container starts.
    for (let i = 0; i < 6; i++) {
      await sleep(150);
      await wipe(engine.sandboxDir);
    }
    const outcomes = await settled;
    for (const outcome of outcomes) {
      if (outcome.status === "fulfilled") {
        // The whole result when it fails: which run was blamed, and what it printed.
        expect(outcome.value.result?.success, JSON.stringify(outcome.value.result)).toBe(true);
      } else {
        const error = outcome.reason as ServiceError;
        expect(error.code).toBe(status.UNAVAILABLE);
        expect(error.details).toMatch(/sandbox directory was wiped|kept disappearing/);
      }
    }

    for (const name of names) {
      const { result } = await engine.client.invoke(name, '{"n": 2}');
      expect(result?.success).toBe(true);
      const { skill } = await engine.client.get(name);
      expect(skill?.failureCount).toBe(0);
    }
    await runsCleanedUp(engine);
  });

  it("the WipeSandbox RPC during a burst behaves the same way", async () => {
    const burst = Array.from({ length: 12 }, (_, i) =>
      engine.client.invoke(names[i % names.length] as string, JSON.stringify({ n: i, sleep: 0.3 })),
    );
    const settled = Promise.allSettled(burst);
    // The first wipe comes once a run of the burst has its directory, so there is surely one to
    // remove, however slowly the burst starts; the others are spread over the rest of it.
    await eventually(
      "a run of the burst to have its run directory",
      async () => ((await readdir(path.join(engine.sandboxDir, "runs")).catch(() => [])).length > 0 ? true : undefined),
      { intervalMs: 25 },
    );
    let removed = 0;
    for (let i = 0; i < 4; i++) {
      if (i > 0) await sleep(200);
      removed += (await engine.client.call(engine.client.raw.wipeSandbox, {})).removedRunDirectories;
    }
    for (const outcome of await settled) {
      if (outcome.status === "fulfilled") expect(outcome.value.result?.success).toBe(true);
      else expect((outcome.reason as ServiceError).code).toBe(status.UNAVAILABLE);
    }
    expect(removed).toBeGreaterThan(0);
    for (const name of names) {
      expect((await engine.client.invoke(name, '{"n": 3}')).result?.success).toBe(true);
      expect((await engine.client.get(name)).skill?.failureCount).toBe(0);
    }
    await runsCleanedUp(engine);
  });
});

/** `rm -rf`, retried while runs keep creating entries under it (as an operator's would be). */
async function wipe(directory: string): Promise<void> {
  await rm(directory, { recursive: true, force: true, maxRetries: 20, retryDelay: 5 });
}
