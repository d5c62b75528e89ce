import { rm } from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import { afterEach, describe, expect, it } from "vitest";
import { instanceTagOf } from "../src/app.js";
import { eventually } from "./support/poll.js";
import { startEngineProxy } from "./support/engine-proxy.js";
import { type ServiceProcess, spawnService } from "./support/service-process.js";
import { connect, containersOf, docker, makeDirs, rpcError, type TestClient, whileItsContainerRuns } from "./support/test-engine.js";

const SLOW_ECHO = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("sleep", 0))
print(json.dumps({"echo": args.get("tag", "")}))
`;

/** One service process with its own directories; everything is torn down after each test. */
interface Fixture {
  service: ServiceProcess;
  client: TestClient;
  instanceTag: string;
  env: Record<string, string>;
}

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

async function startService(extraEnv: Record<string, string>): Promise<Fixture> {
  const dirs = await makeDirs();
  cleanups.push(() => rm(dirs.root, { recursive: true, force: true }));
  const env = { SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir, SKILL_ENGINE_TIMEOUT_MS: "120000", ...extraEnv };
  const service = await spawnService(env);
  cleanups.push(() => service.kill("SIGKILL"));
  const client = connect(service.port);
  cleanups.push(async () => client.close());
  await client.register({ name: "slow_echo", code: SLOW_ECHO, testPayload: '{"sleep": 0, "tag": "test"}' });
  return { service, client, instanceTag: instanceTagOf(dirs.home), env };
}

type InvokeResponse = Awaited<ReturnType<TestClient["invoke"]>>;

/** Starts an invocation and waits until its run's container runs, so that it is surely in flight. */
function invokeInFlight(fixture: Fixture, payload: string): Promise<{ call: Promise<InvokeResponse> }> {
  return whileItsContainerRuns(fixture.instanceTag, () => fixture.client.invoke("slow_echo", payload, 300_000));
}

function logged(service: ServiceProcess, message: string): Promise<Record<string, unknown>> {
  return eventually(`the log line "${message}"`, () => service.logs.find((entry) => String(entry.msg).startsWith(message)));
}

describe("SIGTERM drains calls in flight, then stops", () => {
  it("a run in flight finishes normally, new calls are refused, the process exits 0 leaving no container, and the invocation is recorded", async () => {
    const fixture = await startService({ SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "300" });
    const { service, client, instanceTag, env } = fixture;
    const usageBefore = (await client.get("slow_echo")).skill?.usageCount ?? -1;

    const { call } = await invokeInFlight(fixture, '{"sleep": 3, "tag": "drained"}');
    service.child.kill("SIGTERM");
    const draining = await logged(service, "shutting down: no new calls");
    expect(draining).toMatchObject({ callsInFlight: 1, runsInFlight: 1 });
    // Orchestrators see it too: /readyz beside /metrics says not ready while the drain goes on.
    const { metricsPort } = await logged(service, "skill engine listening");
    expect((await fetch(`http://127.0.0.1:${String(metricsPort)}/readyz`)).status).toBe(503);

    // Not accepting any more: a new connection is refused while the old call goes on.
    const late = connect(service.port);
    const refused = await rpcError(late.list());
    late.close();
    expect(refused.code).toBe(status.UNAVAILABLE);

    const response = await call;
    expect(response.result?.success).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({ echo: "drained" });

    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(await containersOf(instanceTag)).toEqual([]);
    const summary = await logged(service, "calls in flight drained");
    expect(summary).toMatchObject({ callsCutOff: 0, runsDrained: 1, runsCutOff: 0 });
    expect(summary.callsDrained).toBeGreaterThanOrEqual(1);
    expect(service.logs.some((entry) => entry.msg === "skill engine stopped")).toBe(true);

    // The registry was closed after the call had been recorded: a restart sees the invocation.
    const restarted = await spawnService(env);
    cleanups.push(() => restarted.kill("SIGKILL"));
    const check = connect(restarted.port);
    cleanups.push(async () => check.close());
    expect((await check.get("slow_echo")).skill?.usageCount).toBe(usageBefore + 1);
    check.close();
    restarted.child.kill("SIGTERM");
    expect(await restarted.exited).toEqual({ code: 0, signal: null });
  });

  it("past the grace, runs still going are stopped: the call answers UNAVAILABLE, the process exits 0, containers are gone", async () => {
    const fixture = await startService({ SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "1" });
    const { service, instanceTag } = fixture;

    const { call } = await invokeInFlight(fixture, '{"sleep": 30, "tag": "too slow"}');
    service.child.kill("SIGTERM");
    const error = await rpcError(call);
    expect(error.code).toBe(status.UNAVAILABLE);

    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(await containersOf(instanceTag)).toEqual([]);
    expect(await logged(service, "grace over: stopping what is still running")).toMatchObject({ callsCutOff: 1, runsCutOff: 1 });
  });

  it("a second SIGTERM during the drain stops runs in flight at once", async () => {
    const fixture = await startService({ SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "300" });
    const { service, instanceTag } = fixture;

    const { call } = await invokeInFlight(fixture, '{"sleep": 30, "tag": "impatient operator"}');
    service.child.kill("SIGTERM");
    await logged(service, "shutting down: no new calls");
    service.child.kill("SIGTERM");
    const error = await rpcError(call);
    expect(error.code).toBe(status.UNAVAILABLE);

    expect(await service.exited).toEqual({ code: 0, signal: null });
    expect(await containersOf(instanceTag)).toEqual([]);
    await logged(service, "second signal: cutting the drain short");
    expect(await logged(service, "drain cut short")).toMatchObject({ callsCutOff: 1, runsCutOff: 1 });
  });

  it("a third signal exits at once, even while the engine hangs on removing containers", async () => {
    const proxy = await startEngineProxy();
    cleanups.push(() => proxy.close());
    const fixture = await startService({ SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "300", DOCKER_HOST: proxy.dockerHost });
    const { service, instanceTag } = fixture;
    cleanups.push(async () => {
      for (const container of await containersOf(instanceTag)) await docker.getContainer(container.Id).remove({ force: true });
    });

    await invokeInFlight(fixture, '{"sleep": 30, "tag": "stuck engine"}');
    service.child.kill("SIGTERM");
    await logged(service, "shutting down: no new calls");
    // The engine stops answering: stopping the run (kill, remove) now hangs.
    proxy.freeze();
    service.child.kill("SIGTERM");
    await logged(service, "second signal: cutting the drain short");
    service.child.kill("SIGTERM");

    expect(await service.exited).toEqual({ code: 1, signal: null });
    expect(await logged(service, "third signal: exiting without finishing the shutdown")).toMatchObject({ level: 50, signal: "SIGTERM" });
    proxy.thaw();
  });
});
