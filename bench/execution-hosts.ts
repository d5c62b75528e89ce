/**
 * Execution hosts over NATS against the embedded default (docs/execution-hosts.md#measured), in one
 * run on this machine:
 * - local: the service runs sandboxes on its own Docker engine (SKILL_ENGINE_EXECUTION=local);
 * - nats, 1 runner: the control plane publishes runs on a real nats-server, one runner on the
 *   same engine takes them;
 * - nats, 2 runners: a second runner on a second Docker engine (its own data root and socket, on
 *   this machine) joins.
 * For each: InvokeSkill p50/p95 at an agent's pacing (one call every BENCH_PACE_MS), and runs/s with
 * p50/p95 back to back at concurrency 4 and 8. Printed last: the paced p50 overhead of dispatch
 * through NATS, and throughput ratios against local. Both engines share this machine's cores, so
 * the second runner shows how dispatch spreads, not what a second host's CPU adds.
 * Counts: BENCH_HOSTS_ROUNDS (48 back-to-back runs per level), BENCH_PACED (20), BENCH_PACE_MS (300).
 */
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startNatsServer } from "../test/support/nats-server.js";
import { startSecondDockerEngine } from "../test/support/second-docker-engine.js";
import { type ServiceProcess, spawnRunner, spawnService } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const ROUNDS = Number(process.env.BENCH_HOSTS_ROUNDS ?? 48);
const PACED = Number(process.env.BENCH_PACED ?? 20);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);
const CONCURRENCY = [4, 8] as const;
const IMAGE = process.env.SKILL_ENGINE_IMAGE ?? "skill-engine-sandbox:latest";
const SKILL = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'echo': args}))\n";
/** Per execution host, as a runner or the local service: the same slots and warm pool everywhere. */
const HOST_SETTINGS = {
  SKILL_ENGINE_POOL: "on",
  SKILL_ENGINE_POOL_SIZE: "4",
  SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4",
  SKILL_ENGINE_LOG_LEVEL: "info",
};

interface Stats {
  p50: number;
  p95: number;
}

interface Figures {
  paced: Stats;
  load: Map<number, { runsPerSecond: number; latency: Stats }>;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { p50: at(0.5), p95: at(0.95) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function invokeOnce(client: TestClient): Promise<number> {
  const started = performance.now();
  const answer = await client.invoke("echo", '{"n": 1}', 120_000);
  if (!answer.result?.success) throw new Error(`a run failed: ${answer.result?.errorSummary ?? "no result"}`);
  return performance.now() - started;
}

async function measure(client: TestClient): Promise<Figures> {
  await client.register({ name: "echo", code: SKILL, testPayload: '{"n": 0}' }, 120_000);
  for (let i = 0; i < 8; i++) await invokeOnce(client); // warm-up: pools filled, model loaded, connections open
  const paced: number[] = [];
  for (let i = 0; i < PACED; i++) {
    paced.push(await invokeOnce(client));
    await sleep(PACE_MS);
  }
  const load = new Map<number, { runsPerSecond: number; latency: Stats }>();
  for (const concurrency of CONCURRENCY) {
    await sleep(1_000); // let the pools refill
    const latencies: number[] = [];
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < ROUNDS) {
          next++;
          latencies.push(await invokeOnce(client));
        }
      }),
    );
    load.set(concurrency, { runsPerSecond: (ROUNDS * 1000) / (performance.now() - started), latency: stats(latencies) });
  }
  return { paced: stats(paced), load };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "bench-hosts-"));
  const processes: ServiceProcess[] = [];
  const clients: TestClient[] = [];
  const bus = await startNatsServer();
  const secondEngine = await startSecondDockerEngine(IMAGE);
  const figures = new Map<string, Figures>();
  try {
    const service = (name: string, env: Record<string, string>) =>
      spawnService({
        SKILL_ENGINE_HOME: path.join(root, name, "home"),
        SKILL_ENGINE_SANDBOX_DIR: path.join(root, name, "sandbox"),
        ...env,
      });
    const runner = (id: string, env: Record<string, string>) =>
      spawnRunner({
        SKILL_ENGINE_NATS_URL: bus.url,
        SKILL_ENGINE_RUNNER_ID: id,
        SKILL_ENGINE_SANDBOX_DIR: path.join(root, id),
        ...HOST_SETTINGS,
        ...env,
      });
    const run = async (label: string, start: () => Promise<ServiceProcess>): Promise<void> => {
      const control = await start();
      processes.push(control);
      const client = connect(control.port);
      clients.push(client);
      figures.set(label, await measure(client));
      client.close();
      await control.kill("SIGTERM");
    };

    await run("local", () => service("local", HOST_SETTINGS));
    const runnerA = await runner("bench-a", {});
    processes.push(runnerA);
    const natsPlane = { SKILL_ENGINE_EXECUTION: "nats", SKILL_ENGINE_NATS_URL: bus.url, SKILL_ENGINE_LOG_LEVEL: "info" };
    await run("nats, 1 runner", () => service("nats-1", natsPlane));
    const runnerB = await runner("bench-b", { DOCKER_HOST: secondEngine.dockerHost });
    processes.push(runnerB);
    await sleep(2_000); // heard by the next control plane within a beat
    await run("nats, 2 runners", () => service("nats-2", natsPlane));
  } finally {
    for (const client of clients) client.close();
    for (const process of processes.reverse()) await process.kill("SIGTERM");
    await secondEngine.dispose();
    await bus.dispose();
    await rm(root, { recursive: true, force: true });
  }

  const ms = (value: number) => `${value.toFixed(1)} ms`.padStart(10);
  console.log(`\nexecution hosts (${PACED} paced calls every ${PACE_MS} ms; ${ROUNDS} back-to-back runs per level)`);
  console.log(
    `${"what".padEnd(28)} ${"paced p50".padStart(10)} ${"paced p95".padStart(10)}${CONCURRENCY.map((c) => ` ${`c=${c} runs/s`.padStart(12)} ${`c=${c} p50`.padStart(10)} ${`c=${c} p95`.padStart(10)}`).join("")}`,
  );
  for (const [label, figure] of figures) {
    const load = CONCURRENCY.map((c) => {
      const level = figure.load.get(c);
      return ` ${(level?.runsPerSecond ?? 0).toFixed(1).padStart(12)} ${ms(level?.latency.p50 ?? 0)} ${ms(level?.latency.p95 ?? 0)}`;
    }).join("");
    console.log(`${label.padEnd(28)} ${ms(figure.paced.p50)} ${ms(figure.paced.p95)}${load}`);
  }
  const local = figures.get("local");
  const one = figures.get("nats, 1 runner");
  const two = figures.get("nats, 2 runners");
  if (local && one && two) {
    console.log(
      `dispatch through NATS, paced p50 overhead: ${(one.paced.p50 - local.paced.p50).toFixed(1)} ms (1 runner), ${(two.paced.p50 - local.paced.p50).toFixed(1)} ms (2 runners)`,
    );
    for (const c of CONCURRENCY) {
      const base = local.load.get(c)?.runsPerSecond ?? 0;
      const ratio = (other: Figures) => ((other.load.get(c)?.runsPerSecond ?? 0) / base).toFixed(2);
      console.log(
        `runs/s at c=${c}, against local: ${ratio(one)}× (1 runner), ${ratio(two)}× (2 runners on 2 engines sharing this machine's cores)`,
      );
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
