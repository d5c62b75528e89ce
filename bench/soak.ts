/**
 * npm run bench:soak. A benchmark, not a test: the real service as its own process, with
 * SOAK_AGENTS (4) concurrent agents registering, invoking (one call in ten fails on purpose),
 * routing and patching for SOAK_SECONDS (600). Prints throughput, p50/p95/p99 per RPC, errors by
 * RPC and gRPC code, the service's resident memory and open file descriptors sampled every
 * SOAK_SAMPLE_SECONDS (30) with their slope after warm-up (the first third of the samples is
 * left out), and the containers of the service's instance left at the end (after a graceful
 * stop). Writes the figures to bench/results/.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { type ServiceError, status } from "@grpc/grpc-js";
import DockerClient from "dockerode";
import { instanceTagOf } from "../src/app.js";
import { LABEL_INSTANCE, LABEL_MANAGED } from "../src/execution/index.js";
import type { PatchSkillRequest, PatchSkillResponse } from "../src/gen/skillengine/v1/registration.js";
import type { RouteSkillsRequest, RouteSkillsResponse } from "../src/gen/skillengine/v1/routing.js";
import { spawnService } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const AGENTS = Number(process.env.SOAK_AGENTS ?? 4);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 30);
/** Skills each agent owns and cycles through: the registry grows in versions, not in names. */
const SKILLS_PER_AGENT = 3;

type Rpc = "RegisterSkill" | "InvokeSkill" | "RouteSkills" | "PatchSkill";

const QUERIES = ["double a number", "scale a value", "multiply x", "compute the agent's value", "fail on request"];

function skillCode(agent: number, factor: number): string {
  return `import json, sys
args = json.loads(sys.argv[1])
K = ${factor}
if args.get("fail"):
    raise ValueError("asked to fail")
print(json.dumps({"agent": ${agent}, "value": args.get("x", 0) * K}))
`;
}

interface Sample {
  readonly atSeconds: number;
  readonly rssMb: number;
  readonly openFds: number;
  /** V8's used heap, from the service's own /metrics: tells a JavaScript leak from native caches. */
  readonly heapUsedMb: number;
  /** Anonymous resident memory (the heaps: V8, malloc, WebAssembly): where a leak would show. */
  readonly rssAnonMb: number;
  /** File-backed resident memory (mapped code, model weights): the kernel may drop it at will. */
  readonly rssFileMb: number;
  /** Memory of C++ objects bound to JavaScript ones (buffers, native handles), from /metrics. */
  readonly externalMb: number;
}

async function sampleProcess(pid: number, startedAt: number, metricsPort: number | undefined): Promise<Sample> {
  const statusText = await readFile(`/proc/${pid}/status`, "utf8");
  const kilobytes = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(statusText)?.[1] ?? 0) / 1024;
  const openFds = (await readdir(`/proc/${pid}/fd`)).length;
  let heapUsedMb = 0;
  let externalMb = 0;
  if (metricsPort !== undefined) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const bytes = (metric: string) => Number(new RegExp(`^${metric} (\\S+)$`, "m").exec(text)?.[1] ?? 0) / 2 ** 20;
    heapUsedMb = bytes("nodejs_heap_size_used_bytes");
    externalMb = bytes("nodejs_external_memory_bytes");
  }
  return {
    atSeconds: (performance.now() - startedAt) / 1000,
    rssMb: kilobytes("VmRSS"),
    rssAnonMb: kilobytes("RssAnon"),
    rssFileMb: kilobytes("RssFile"),
    openFds,
    heapUsedMb,
    externalMb,
  };
}

/** Least-squares slope of `y` over `x`, per minute of x in seconds. */
function slopePerMinute(points: ReadonlyArray<[number, number]>): number {
  if (points.length < 2) return 0;
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const sxy = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const sxx = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return sxx === 0 ? 0 : (sxy / sxx) * 60;
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

class Recorder {
  readonly latencies = new Map<Rpc, number[]>();
  readonly errors = new Map<string, number>();

  async time<T>(rpc: Rpc, work: () => Promise<T>): Promise<T | undefined> {
    const started = performance.now();
    try {
      const result = await work();
      this.push(rpc, performance.now() - started);
      return result;
    } catch (error) {
      this.push(rpc, performance.now() - started);
      const code = (error as ServiceError).code;
      const key = `${rpc} ${code === undefined ? "client error" : (status[code] ?? String(code))}`;
      this.errors.set(key, (this.errors.get(key) ?? 0) + 1);
      return undefined;
    }
  }

  private push(rpc: Rpc, ms: number): void {
    const list = this.latencies.get(rpc) ?? [];
    list.push(ms);
    this.latencies.set(rpc, list);
  }
}

/** One agent: its own skills, a weighted mix of calls, until `until`. */
async function agent(id: number, client: TestClient, recorder: Recorder, until: number): Promise<{ failedRuns: number }> {
  const factors = new Map<string, number>();
  const nameOf = (i: number) => `soak_a${id}_s${i}`;
  let failedRuns = 0;
  for (let i = 0; i < SKILLS_PER_AGENT; i++) {
    await recorder.time("RegisterSkill", () =>
      client.register({ name: nameOf(i), code: skillCode(id, 1), testPayload: '{"x": 1}', description: `Scales x for agent ${id}.` }),
    );
    factors.set(nameOf(i), 1);
  }
  while (performance.now() < until) {
    const name = nameOf(Math.floor(Math.random() * SKILLS_PER_AGENT));
    const roll = Math.random();
    if (roll < 0.6) {
      const fail = Math.random() < 0.1;
      const response = await recorder.time("InvokeSkill", () =>
        client.invoke(name, JSON.stringify({ x: 3, ...(fail ? { fail: true } : {}) })),
      );
      if (response && !response.result?.success) failedRuns++;
    } else if (roll < 0.8) {
      const query = QUERIES[Math.floor(Math.random() * QUERIES.length)] ?? "";
      await recorder.time("RouteSkills", () =>
        client.call<RouteSkillsRequest, RouteSkillsResponse>(client.raw.routeSkills, { query, limit: 5, format: 0, mode: 0 }),
      );
    } else if (roll < 0.92) {
      const factor = factors.get(name) ?? 1;
      const next = factor === 1 ? 2 : 1;
      const patched = await recorder.time("PatchSkill", () =>
        client.call<PatchSkillRequest, PatchSkillResponse>(client.raw.patchSkill, {
          name,
          find: `K = ${factor}`,
          replace: `K = ${next}`,
          testPayload: "",
        }),
      );
      if (patched) factors.set(name, next);
    } else {
      const registered = await recorder.time("RegisterSkill", () =>
        client.register({ name, code: skillCode(id, 1), testPayload: '{"x": 1}', description: `Scales x for agent ${id}.` }),
      );
      if (registered) factors.set(name, 1);
    }
  }
  return { failedRuns };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-soak-"));
  const home = path.join(root, "home");
  const docker = new DockerClient({ socketPath: "/var/run/docker.sock" });
  const service = await spawnService({
    SKILL_ENGINE_HOME: home,
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: "on",
  });
  const pid = service.child.pid ?? 0;
  const listening = service.logs.find((entry) => typeof entry.metricsPort === "number");
  const metricsPort = listening?.metricsPort as number | undefined;
  const clients = Array.from({ length: AGENTS }, () => connect(service.port));
  const recorder = new Recorder();
  const startedAt = performance.now();
  const samples: Sample[] = [await sampleProcess(pid, startedAt, metricsPort)];
  const sampler = setInterval(() => {
    sampleProcess(pid, startedAt, metricsPort)
      .then((sample) => {
        samples.push(sample);
        console.log(
          `  t=${sample.atSeconds.toFixed(0)} s  rss ${sample.rssMb.toFixed(1)} MB (anon ${sample.rssAnonMb.toFixed(1)}, file ${sample.rssFileMb.toFixed(1)})  heap ${sample.heapUsedMb.toFixed(1)} MB  external ${sample.externalMb.toFixed(1)} MB  fds ${sample.openFds}`,
        );
      })
      .catch(() => undefined);
  }, SAMPLE_SECONDS * 1000);
  console.log(`soak: ${AGENTS} agents for ${SECONDS} s against pid ${pid}; sampling every ${SAMPLE_SECONDS} s`);
  const until = startedAt + SECONDS * 1000;
  const outcomes = await Promise.all(clients.map((client, id) => agent(id, client, recorder, until)));
  const elapsed = (performance.now() - startedAt) / 1000;
  clearInterval(sampler);
  samples.push(await sampleProcess(pid, startedAt, metricsPort));
  const instance = instanceTagOf(home);
  const filters = { label: [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${instance}`] };
  const containersBeforeStop = (await docker.listContainers({ all: true, filters })).length;
  for (const client of clients) client.close();
  await service.kill("SIGTERM");
  const containersLeft = (await docker.listContainers({ all: true, filters })).length;
  // SQLite's page cache (up to 16 MiB per connection) grows with the database: its size explains part of RSS.
  const databaseMb = (await stat(path.join(home, "registry.db")).catch(() => ({ size: 0 }))).size / 2 ** 20;

  const total = [...recorder.latencies.values()].reduce((n, list) => n + list.length, 0);
  const perRpc = [...recorder.latencies.entries()].map(([rpc, list]) => {
    const sorted = [...list].sort((a, b) => a - b);
    return {
      rpc,
      calls: list.length,
      perSecond: list.length / elapsed,
      p50: percentile(sorted, 0.5),
      p95: percentile(sorted, 0.95),
      p99: percentile(sorted, 0.99),
    };
  });
  const steady = samples.slice(Math.floor(samples.length / 3));
  const rssSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.rssMb]));
  const fdSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.openFds]));
  const heapSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.heapUsedMb]));
  const anonSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.rssAnonMb]));
  const fileSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.rssFileMb]));
  const figures = {
    date: new Date().toISOString(),
    seconds: Math.round(elapsed),
    agents: AGENTS,
    cpus: os.cpus().length,
    totalCalls: total,
    callsPerSecond: total / elapsed,
    perRpc,
    errors: Object.fromEntries(recorder.errors),
    inBandFailedRuns: outcomes.reduce((n, o) => n + o.failedRuns, 0),
    samples,
    rssSlopeMbPerMinute: rssSlope,
    fdSlopePerMinute: fdSlope,
    heapSlopeMbPerMinute: heapSlope,
    rssAnonSlopeMbPerMinute: anonSlope,
    rssFileSlopeMbPerMinute: fileSlope,
    containersBeforeStop,
    containersLeft,
    registryDbMb: databaseMb,
  };

  console.log(
    `\n${total} calls in ${elapsed.toFixed(0)} s: ${figures.callsPerSecond.toFixed(1)} calls/s (${AGENTS} agents, ${figures.cpus} CPUs)`,
  );
  console.log("RPC              calls   per s     p50 ms    p95 ms    p99 ms");
  for (const row of perRpc) {
    console.log(
      `${row.rpc.padEnd(15)} ${String(row.calls).padStart(6)} ${row.perSecond.toFixed(2).padStart(7)} ${row.p50.toFixed(1).padStart(10)} ${row.p95.toFixed(1).padStart(9)} ${row.p99.toFixed(1).padStart(9)}`,
    );
  }
  console.log(`errors by RPC and code: ${recorder.errors.size === 0 ? "none" : JSON.stringify(figures.errors)}`);
  console.log(`in-band failed runs (the one call in ten that fails on purpose): ${figures.inBandFailedRuns}`);
  console.log(
    "samples (t s, RSS MB, heap MB, open fds): " +
      samples.map((s) => `${s.atSeconds.toFixed(0)}/${s.rssMb.toFixed(1)}/${s.heapUsedMb.toFixed(1)}/${s.openFds}`).join("  "),
  );
  console.log(
    `after warm-up (${steady.length} samples from t=${steady[0]?.atSeconds.toFixed(0) ?? "?"} s): RSS slope ${rssSlope.toFixed(2)} MB/min ` +
      `(anonymous ${anonSlope.toFixed(2)}, file-backed ${fileSlope.toFixed(2)}), V8 heap slope ${heapSlope.toFixed(2)} MB/min, ` +
      `open fds slope ${fdSlope.toFixed(2)}/min`,
  );
  console.log(`registry.db at the end: ${databaseMb.toFixed(1)} MB`);
  console.log(`containers of the instance: ${containersBeforeStop} before the stop (the warm pool), ${containersLeft} left after it`);

  const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), "results");
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `soak-${figures.date.replace(/[:.]/g, "-")}.json`);
  await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
  console.log(`figures written to ${path.relative(process.cwd(), file)}`);
  await rm(root, { recursive: true, force: true });
  if (containersLeft > 0) process.exitCode = 1;
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
