import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_INSTANCE, LABEL_MANAGED, runnerInstanceTag } from "../src/execution/index.js";
import { type HealthProbe, healthProbe, SKILL_ENGINE_SERVICE } from "./support/health-client.js";
import { type NatsServer, startNatsServer } from "./support/nats-server.js";
import { eventually } from "./support/poll.js";
import { type SecondDockerEngine, startSecondDockerEngine } from "./support/second-docker-engine.js";
import { type ServiceProcess, spawnRunner } from "./support/service-process.js";
import { metricSamples, rpcError, samples, startTestEngine, type TestEngine } from "./support/test-engine.js";

const IMAGE = "skill-engine-sandbox:latest";
/**
 * The runners' beat and the control plane's. A runner is counted gone after 3 beats of silence: 9 s
 * is more than a loaded 2-core machine keeps a process from running, so only a killed or stopped
 * runner is ever counted gone (a shorter beat made the exact counts below flaky).
 */
const HEARTBEAT_MS = 3_000;

const SLEEPER = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("s", 0))
print(json.dumps({"slept": args.get("s", 0), "tag": args.get("tag", "")}))
`;
const DOUBLER = `import json, sys
print(json.dumps({"doubled": json.loads(sys.argv[1])["x"] * 2}))
`;

/** One execution host: a runner process and the Docker engine it owns (its own data root, socket, pid file). */
interface Host {
  readonly id: string;
  readonly engine: SecondDockerEngine;
  readonly sandboxDir: string;
  process: ServiceProcess;
}

/**
 * The set-up: a real nats-server, two runners each with its own Docker engine, and a
 * control plane with SKILL_ENGINE_EXECUTION=nats (no engine of its own is used).
 */
describe("execution hosts behind NATS", () => {
  let bus: NatsServer;
  let root: string;
  const hosts: Host[] = [];
  let plane: TestEngine;
  let health: HealthProbe;

  const runnerEnv = (host: Pick<Host, "id" | "engine" | "sandboxDir">): Record<string, string> => ({
    SKILL_ENGINE_NATS_URL: bus.url,
    SKILL_ENGINE_RUNNER_ID: host.id,
    DOCKER_HOST: host.engine.dockerHost,
    SKILL_ENGINE_SANDBOX_DIR: host.sandboxDir,
    SKILL_ENGINE_MAX_CONCURRENT_RUNS: "2",
    SKILL_ENGINE_POOL: "on",
    SKILL_ENGINE_POOL_SIZE: "1",
    SKILL_ENGINE_RUNNER_HEARTBEAT_MS: String(HEARTBEAT_MS),
    SKILL_ENGINE_ENGINE_PROBE_MS: "300",
    SKILL_ENGINE_SANDBOX_SWEEP_SECONDS: "1",
    // Far above any wait here: a run stopped by a deadline is stopped by it, not by the sandbox limit.
    SKILL_ENGINE_TIMEOUT_MS: "900000",
    SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "60",
  });
  const startHost = async (host: Host): Promise<void> => {
    host.process = await spawnRunner(runnerEnv(host));
  };
  const runnerMetric = async (host: Host, metric: string): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${host.process.port}/metrics`)).text();
    return samples(text, metric).reduce((sum, sample) => sum + sample.value, 0);
  };
  /** Containers of a runner's instance on its own engine. */
  const containersOn = (host: Host): Promise<Array<{ Id: string; State: string }>> =>
    host.engine.docker.listContainers({
      all: true,
      filters: { label: [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${runnerInstanceTag(host.id)}`] },
    });
  const invoke = (name: string, payload: unknown, idempotencyKey?: string) =>
    plane.client.call(
      plane.client.raw.invokeSkill,
      {
        name,
        payload: JSON.stringify(payload),
        payloadJson: undefined,
        routeId: "",
        files: [],
        ...(idempotencyKey ? { idempotencyKey } : {}),
      },
      120_000,
    );

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "execution-hosts-"));
    bus = await startNatsServer();
    const engines = await Promise.all([startSecondDockerEngine(IMAGE), startSecondDockerEngine(IMAGE)]);
    for (const [index, engine] of engines.entries()) {
      const id = `runner-${String.fromCharCode(97 + index)}`;
      const host = { id, engine, sandboxDir: path.join(root, id), process: undefined as unknown as ServiceProcess };
      await startHost(host);
      hosts.push(host);
    }
    plane = await startTestEngine({
      env: {
        SKILL_ENGINE_EXECUTION: "nats",
        SKILL_ENGINE_NATS_URL: bus.url,
        SKILL_ENGINE_RUNNER_HEARTBEAT_MS: String(HEARTBEAT_MS),
        SKILL_ENGINE_ENGINE_PROBE_MS: "300",
        SKILL_ENGINE_DISPATCH_WAIT_MS: "30000",
        // No engine is used by the control plane in this mode: a wrong address proves it.
        DOCKER_HOST: "unix:///nonexistent/docker.sock",
      },
    });
    health = healthProbe(plane.app.port);
    await eventually("the control plane to hear both runners", async () =>
      (await health.check(SKILL_ENGINE_SERVICE)) === "SERVING" ? true : undefined,
    );
    await eventually("both runners' slots to be offered", async () => {
      const free = (await metricSamples(plane, "skill_engine_runner_slots")).filter((s) => s.labels.state === "free");
      return free.length === 2 && free.every((s) => s.value === 2) ? true : undefined;
    });
  }, 180_000);

  afterAll(async () => {
    health?.close();
    await plane?.dispose();
    for (const host of hosts) await host.process?.kill("SIGTERM");
    for (const host of hosts) await host.engine.dispose();
    await bus?.dispose();
    await rm(root, { recursive: true, force: true });
  }, 180_000);

  it("runs spread over both runners, each counted in its own metrics, with the answers and counts of a local run", async () => {
    await plane.client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' });
    await plane.client.register({ name: "sleeper", code: SLEEPER, testPayload: '{"s": 0}' });
    const answers = await Promise.all(Array.from({ length: 16 }, (_, x) => invoke("doubler", { x })));
    expect(answers.map((answer) => JSON.parse(answer.result?.stdout ?? "null"))).toEqual(
      Array.from({ length: 16 }, (_, x) => ({ doubled: 2 * x })),
    );
    const runs = await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_sandbox_runs_total")));
    expect(runs.every((count) => count > 0)).toBe(true);
    expect(runs.reduce((a, b) => a + b, 0)).toBe(16 + 2);
    const { skill } = await plane.client.get("doubler");
    expect(skill).toMatchObject({ usageCount: 16, failureCount: 0 });
  }, 120_000);

  it("a runner with no free slot is offered nothing: runs beyond every runner's slots wait for room", async () => {
    const long = Array.from({ length: 4 }, (_, i) => invoke("sleeper", { s: 3, tag: `long-${i}` }).then(() => Date.now()));
    await eventually("every slot busy", async () => {
      const busy = await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_runs_in_flight")));
      return busy.every((n) => n === 2) ? busy : undefined;
    });
    const waiting = invoke("sleeper", { s: 0, tag: "waited" }).then(() => Date.now());
    await eventually("the fifth run to wait on the control plane", async () =>
      (await metricSamples(plane, "skill_engine_run_queue_depth"))[0]?.value === 1 ? true : undefined,
    );
    // While it waits, no runner holds more than its two slots.
    expect(await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_runs_in_flight")))).toEqual([2, 2]);
    const firstLongDone = Math.min(...(await Promise.all(long)));
    expect(await waiting).toBeGreaterThanOrEqual(firstLongDone);
  }, 120_000);

  it("a deadline reaches the runner: the call answers DEADLINE_EXCEEDED and the runner stops and removes its container", async () => {
    const finishedBefore = await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_sandbox_runs_total")));
    // The run sleeps 600 s, far within the sandbox limit: only the cancellation the deadline sends
    // can stop it. The deadline leaves a loaded machine ample time to hand the run to a runner first.
    const call = rpcError(
      plane.client.call(
        plane.client.raw.invokeSkill,
        { name: "sleeper", payload: '{"s": 600, "tag": "too slow"}', payloadJson: undefined, routeId: "", files: [] },
        15_000,
      ),
    );
    await eventually(
      "a runner to hold the run",
      async () =>
        (await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_runs_in_flight")))).some((n) => n > 0) ? true : undefined,
      { intervalMs: 25 },
    );
    const error = await call;
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    // Long before the sleep would end (a control plane that did not tell the runner would leave it
    // running for 600 s), the runner stops the run and removes its container.
    await eventually(
      "both runners to be idle, with only their warm pools left",
      async () => {
        for (const host of hosts) {
          if ((await runnerMetric(host, "skill_engine_runs_in_flight")) !== 0) return undefined;
          const containers = await containersOn(host);
          if (containers.length > (await runnerMetric(host, "skill_engine_warm_pool_idle"))) return undefined;
        }
        return true;
      },
      { timeoutMs: 90_000 },
    );
    // Stopped, not finished: no runner counts it as a run of the skill, and neither does the control plane.
    expect(await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_sandbox_runs_total")))).toEqual(finishedBefore);
    expect((await plane.client.get("sleeper")).skill?.failureCount).toBe(0);
  }, 180_000);

  it("a malformed run message is refused by the runner with a reason, and WipeSandbox reaches every runner", async () => {
    const { connect } = await import("@nats-io/transport-node");
    const raw = await connect({ servers: bus.url });
    try {
      const reply = await raw.request("skillengine.runs", JSON.stringify({ v: 1, id: "x", code: 42 }), { timeout: 30_000 });
      expect(reply.json()).toMatchObject({ type: "failed", kind: "refused", message: expect.stringMatching(/malformed run request/) });
    } finally {
      await raw.close();
    }
    const wiped = await plane.client.call(plane.client.raw.wipeSandbox, {});
    expect(wiped.removedRunDirectories).toBeGreaterThanOrEqual(0);
    // Each runner answers over the bus and logs on its stdout: the log line can reach this test after the answer.
    await eventually("every runner to log the wipe", async () =>
      hosts.every((host) => host.process.logs.some((entry) => entry.msg === "sandbox directory wiped")) ? true : undefined,
    );
    // The runners still serve after the wipe (their warm containers' directories went with it).
    expect(JSON.parse((await invoke("doubler", { x: 4 })).result?.stdout ?? "null")).toEqual({ doubled: 8 });
  }, 60_000);

  /** Runs lost with their runner so far, as the control plane counts them. */
  const runnerLost = async (): Promise<number> =>
    (await metricSamples(plane, "skill_engine_sandbox_infrastructure_faults_total"))
      .filter((sample) => sample.labels.fault === "runner-lost")
      .reduce((sum, sample) => sum + sample.value, 0);
  /** Waits until every slot of both runners is busy: the victim then surely holds two of the runs. */
  const allSlotsBusy = () =>
    eventually(
      "every slot busy",
      async () =>
        (await Promise.all(hosts.map((host) => runnerMetric(host, "skill_engine_runs_in_flight")))).every((n) => n === 2)
          ? true
          : undefined,
      { intervalMs: 25 },
    );
  /** Kills the victim, brings it back with the same id on the same engine, and checks that what its previous life left is removed. */
  const killAndRestart = async (victim: Host, afterKill: () => Promise<void>): Promise<void> => {
    // Its two runs' containers are started (a run counts as in flight while its container is still being made).
    const leftBehind = await eventually(
      "the victim's runs to have their containers",
      async () => {
        const running = (await containersOn(victim)).filter((c) => c.State === "running");
        return running.length >= 2 ? running.map((c) => c.Id) : undefined;
      },
      { intervalMs: 25 },
    );
    await victim.process.kill("SIGKILL");
    await afterKill();
    await startHost(victim);
    await eventually("the killed runner's containers to be gone", async () => {
      const ids = new Set((await containersOn(victim)).map((c) => c.Id));
      return leftBehind.every((id) => !ids.has(id)) ? true : undefined;
    });
    await eventually("the control plane to hear it again", async () => {
      const free = (await metricSamples(plane, "skill_engine_runner_slots")).filter(
        (s) => s.labels.runner === victim.id && s.labels.state === "free",
      );
      return free[0]?.value === 2 ? true : undefined;
    });
  };

  it("a runner killed mid-run: its invocations answer UNAVAILABLE and count nothing; once it is back, nothing it left remains", async () => {
    const victim = hosts[0] as Host;
    const before = (await plane.client.get("sleeper")).skill;
    const plain = Array.from({ length: 4 }, (_, i) =>
      invoke("sleeper", { s: 2, tag: `plain-${i}` }).then(
        (answer) => ({ ok: true as const, answer }),
        (error: unknown) => ({ ok: false as const, error: error as { code: number; details: string } }),
      ),
    );
    await allSlotsBusy();
    await killAndRestart(victim, async () => {
      const outcomes = await Promise.all(plain);
      const failed = outcomes.filter((outcome) => !outcome.ok);
      expect(failed).toHaveLength(2);
      for (const outcome of failed) {
        expect(outcome.error.code).toBe(status.UNAVAILABLE);
        expect(outcome.error.details).toMatch(/runner-a went silent.*not the skill's/);
      }
      // The lost runs never touched the skill: only the two answered invocations counted, none as a failure.
      expect((await plane.client.get("sleeper")).skill).toMatchObject({
        usageCount: (before?.usageCount ?? 0) + 2,
        failureCount: before?.failureCount ?? 0,
      });
      expect(
        (await metricSamples(plane, "skill_engine_sandbox_infrastructure_faults_total")).find((s) => s.labels.fault === "runner-lost")
          ?.value,
      ).toBe(2);
    });
  }, 180_000);

  it("a runner killed mid-run: registrations' test runs and invocations with an idempotency key are run again on the other runner", async () => {
    const victim = hosts[0] as Host;
    const lostBefore = await runnerLost();
    const keyed = Array.from({ length: 2 }, (_, i) => invoke("sleeper", { s: 2, tag: `keyed-${i}` }, `key-${i}-${Date.now()}`));
    const registrations = Array.from({ length: 2 }, (_, i) =>
      plane.client.register({ name: `born_in_failover_${i}`, code: SLEEPER, testPayload: '{"s": 2}' }, 120_000),
    );
    await allSlotsBusy();
    await killAndRestart(victim, async () => {
      for (const answer of await Promise.all(keyed)) expect(answer.result?.success).toBe(true);
      for (const registered of await Promise.all(registrations)) expect(registered.skill?.version).toBe(1);
      const listed = (await plane.client.list()).skills.map((skill) => skill.name);
      expect(listed).toEqual(expect.arrayContaining(["born_in_failover_0", "born_in_failover_1"]));
      // The two runs the victim held were lost and run again, counted for operators, never for the skills.
      expect((await runnerLost()) - lostBefore).toBe(2);
    });
  }, 180_000);

  it("a runner stopped (SIGTERM) mid-load finishes what it took, the other takes the rest, and it leaves no container", async () => {
    const stopping = hosts[1] as Host;
    const calls = Array.from({ length: 8 }, (_, i) => invoke("sleeper", { s: 1, tag: `drain-${i}` }));
    await eventually(
      "the runner to be running something",
      async () => ((await runnerMetric(stopping, "skill_engine_runs_in_flight")) > 0 ? true : undefined),
      {
        intervalMs: 25,
      },
    );
    stopping.process.child.kill("SIGTERM");
    for (const answer of await Promise.all(calls)) expect(answer.result?.success).toBe(true);
    expect(await stopping.process.exited).toEqual({ code: 0, signal: null });
    expect(await containersOn(stopping)).toEqual([]);
    await startHost(stopping);
  }, 180_000);

  it("with no runner on the bus a run answers UNAVAILABLE at once, health says NOT_SERVING, and nothing is counted", async () => {
    const before = (await plane.client.get("doubler")).skill;
    for (const host of hosts) await host.process.kill("SIGTERM");
    await eventually("health to say NOT_SERVING", async () =>
      (await health.check(SKILL_ENGINE_SERVICE)) === "NOT_SERVING" ? true : undefined,
    );
    const error = await rpcError(invoke("doubler", { x: 1 }));
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(/no runner is connected to the bus/);
    expect((await plane.client.get("doubler")).skill).toMatchObject({ usageCount: before?.usageCount, failureCount: before?.failureCount });
    for (const host of hosts) expect(await containersOn(host)).toEqual([]);
  }, 120_000);
});
