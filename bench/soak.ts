/**
 * npm run bench:soak. A benchmark, not a test: the real service as its own process, with
 * SOAK_AGENTS (4) concurrent agents registering, invoking (one call in ten fails on purpose),
 * routing and patching for SOAK_SECONDS (600). Prints throughput, p50/p95/p99 per RPC, errors by
 * RPC and gRPC code, the service's resident memory and open file descriptors sampled every
 * SOAK_SAMPLE_SECONDS (30) with their slope after warm-up (the first third of the samples is
 * left out), and the containers of the service's instance left at the end (after a graceful
 * stop). SQLite's memory cannot be read from outside (better-sqlite3 builds it without memory
 * statistics), so each sample carries what bounds it: the database's and the WAL's size and the
 * page caches' ceiling, five connections × min(file size, SOAK_SQLITE_CACHE_KIB, the service's
 * default when unset). Writes the figures to bench/results/, with an SVG plot of the samples.
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
import { DEFAULT_SQLITE_CACHE_KIB } from "../src/sqlite/index.js";
import { spawnService } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const AGENTS = Number(process.env.SOAK_AGENTS ?? 4);
const SAMPLE_SECONDS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 30);
/** The service's page cache per SQLite connection (SKILL_ENGINE_SQLITE_CACHE_KIB); 16000 is the old default. */
const SQLITE_CACHE_KIB = Number(process.env.SOAK_SQLITE_CACHE_KIB ?? DEFAULT_SQLITE_CACHE_KIB);
/** The service's connections on registry.db (registry, composition, learning, routing, playbook). */
const SQLITE_CONNECTIONS = 5;
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
  /** V8's committed heap: grows apart from the used heap when V8's own pages fragment. */
  readonly heapTotalMb: number;
  /** Anonymous resident memory (the heaps: V8, malloc, WebAssembly): where a leak would show. */
  readonly rssAnonMb: number;
  /** File-backed resident memory (mapped code, model weights): the kernel may drop it at will. */
  readonly rssFileMb: number;
  /** Memory of C++ objects bound to JavaScript ones (buffers, native handles), from /metrics. */
  readonly externalMb: number;
  /** registry.db and its WAL on disk. */
  readonly databaseMb: number;
  readonly walMb: number;
  /** The most SQLite's page caches can hold now: connections × min(file size, cache size). */
  readonly sqliteCacheCeilingMb: number;
}

async function fileMb(file: string): Promise<number> {
  return (await stat(file).catch(() => ({ size: 0 }))).size / 2 ** 20;
}

async function sampleProcess(pid: number, startedAt: number, metricsPort: number | undefined, home: string): Promise<Sample> {
  const statusText = await readFile(`/proc/${pid}/status`, "utf8");
  const kilobytes = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(statusText)?.[1] ?? 0) / 1024;
  const openFds = (await readdir(`/proc/${pid}/fd`)).length;
  let heapUsedMb = 0;
  let heapTotalMb = 0;
  let externalMb = 0;
  if (metricsPort !== undefined) {
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const bytes = (metric: string) => Number(new RegExp(`^${metric} (\\S+)$`, "m").exec(text)?.[1] ?? 0) / 2 ** 20;
    heapUsedMb = bytes("nodejs_heap_size_used_bytes");
    heapTotalMb = bytes("nodejs_heap_size_total_bytes");
    externalMb = bytes("nodejs_external_memory_bytes");
  }
  const databaseMb = await fileMb(path.join(home, "registry.db"));
  const walMb = await fileMb(path.join(home, "registry.db-wal"));
  return {
    databaseMb,
    walMb,
    sqliteCacheCeilingMb: SQLITE_CONNECTIONS * Math.min(databaseMb + walMb, SQLITE_CACHE_KIB / 1024),
    atSeconds: (performance.now() - startedAt) / 1000,
    rssMb: kilobytes("VmRSS"),
    rssAnonMb: kilobytes("RssAnon"),
    rssFileMb: kilobytes("RssFile"),
    openFds,
    heapUsedMb,
    heapTotalMb,
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
      // A new version each time (the other factor): registering the active code again changes nothing.
      const next = (factors.get(name) ?? 1) === 1 ? 2 : 1;
      const registered = await recorder.time("RegisterSkill", () =>
        client.register({ name, code: skillCode(id, next), testPayload: '{"x": 1}', description: `Scales x for agent ${id}.` }),
      );
      if (registered) factors.set(name, next);
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
    SKILL_ENGINE_SQLITE_CACHE_KIB: String(SQLITE_CACHE_KIB),
  });
  const pid = service.child.pid ?? 0;
  const listening = service.logs.find((entry) => typeof entry.metricsPort === "number");
  const metricsPort = listening?.metricsPort as number | undefined;
  const clients = Array.from({ length: AGENTS }, () => connect(service.port));
  const recorder = new Recorder();
  const startedAt = performance.now();
  const samples: Sample[] = [await sampleProcess(pid, startedAt, metricsPort, home)];
  const sampler = setInterval(() => {
    sampleProcess(pid, startedAt, metricsPort, home)
      .then((sample) => {
        samples.push(sample);
        console.log(
          `  t=${sample.atSeconds.toFixed(0)} s  rss ${sample.rssMb.toFixed(1)} MB (anon ${sample.rssAnonMb.toFixed(1)}, file ${sample.rssFileMb.toFixed(1)})  heap ${sample.heapUsedMb.toFixed(1)} of ${sample.heapTotalMb.toFixed(1)} MB  external ${sample.externalMb.toFixed(1)} MB  fds ${sample.openFds}  db ${sample.databaseMb.toFixed(1)} MB (wal ${sample.walMb.toFixed(1)}, cache ceiling ${sample.sqliteCacheCeilingMb.toFixed(1)})`,
        );
      })
      .catch(() => undefined);
  }, SAMPLE_SECONDS * 1000);
  console.log(
    `soak: ${AGENTS} agents for ${SECONDS} s against pid ${pid}; sampling every ${SAMPLE_SECONDS} s; SQLite cache ${SQLITE_CACHE_KIB} KiB a connection`,
  );
  const until = startedAt + SECONDS * 1000;
  const outcomes = await Promise.all(clients.map((client, id) => agent(id, client, recorder, until)));
  const elapsed = (performance.now() - startedAt) / 1000;
  clearInterval(sampler);
  samples.push(await sampleProcess(pid, startedAt, metricsPort, home));
  const instance = instanceTagOf(home);
  const filters = { label: [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${instance}`] };
  const containersBeforeStop = (await docker.listContainers({ all: true, filters })).length;
  for (const client of clients) client.close();
  await service.kill("SIGTERM");
  const containersLeft = (await docker.listContainers({ all: true, filters })).length;
  const databaseMb = await fileMb(path.join(home, "registry.db"));

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
  const heapTotalSlope = slopePerMinute(steady.map((s) => [s.atSeconds, s.heapTotalMb]));
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
    heapTotalSlopeMbPerMinute: heapTotalSlope,
    rssAnonSlopeMbPerMinute: anonSlope,
    rssFileSlopeMbPerMinute: fileSlope,
    containersBeforeStop,
    containersLeft,
    registryDbMb: databaseMb,
    sqliteCacheKib: SQLITE_CACHE_KIB,
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
      `(anonymous ${anonSlope.toFixed(2)}, file-backed ${fileSlope.toFixed(2)}), V8 heap slope ${heapSlope.toFixed(2)} MB/min (committed ${heapTotalSlope.toFixed(2)}), ` +
      `open fds slope ${fdSlope.toFixed(2)}/min`,
  );
  console.log(`registry.db at the end: ${databaseMb.toFixed(1)} MB`);
  console.log(`containers of the instance: ${containersBeforeStop} before the stop (the warm pool), ${containersLeft} left after it`);

  const resultsDir = path.join(path.dirname(new URL(import.meta.url).pathname), "results");
  await mkdir(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `soak-${figures.date.replace(/[:.]/g, "-")}.json`);
  await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
  await writeFile(
    file.replace(/\.json$/, ".svg"),
    plotSamples(samples, `soak ${figures.date}: ${AGENTS} agents, SQLite cache ${SQLITE_CACHE_KIB} KiB`),
  );
  console.log(`figures written to ${path.relative(process.cwd(), file)} (plot beside it, .svg)`);
  await rm(root, { recursive: true, force: true });
  if (containersLeft > 0) process.exitCode = 1;
}

/** RSS, anonymous RSS, V8 heap and SQLite's cache ceiling over time, as a small SVG line chart. */
function plotSamples(samples: readonly Sample[], title: string): string {
  const width = 800;
  const height = 400;
  const margin = { left: 60, right: 170, top: 30, bottom: 40 };
  const series: Array<{ label: string; colour: string; value: (s: Sample) => number }> = [
    { label: "RSS", colour: "#1f77b4", value: (s) => s.rssMb },
    { label: "anonymous RSS", colour: "#ff7f0e", value: (s) => s.rssAnonMb },
    { label: "V8 heap used", colour: "#2ca02c", value: (s) => s.heapUsedMb },
    { label: "SQLite cache ceiling", colour: "#d62728", value: (s) => s.sqliteCacheCeilingMb },
  ];
  const maxX = Math.max(1, ...samples.map((s) => s.atSeconds));
  const maxY = Math.max(1, ...samples.flatMap((s) => series.map((line) => line.value(s)))) * 1.1;
  const x = (seconds: number) => margin.left + (seconds / maxX) * (width - margin.left - margin.right);
  const y = (mb: number) => height - margin.bottom - (mb / maxY) * (height - margin.top - margin.bottom);
  const lines = series.map((line, i) => {
    const points = samples.map((s) => `${x(s.atSeconds).toFixed(1)},${y(line.value(s)).toFixed(1)}`).join(" ");
    const legendY = margin.top + 20 * i;
    return (
      `<polyline fill="none" stroke="${line.colour}" stroke-width="2" points="${points}"/>` +
      `<rect x="${width - margin.right + 15}" y="${legendY - 9}" width="12" height="12" fill="${line.colour}"/>` +
      `<text x="${width - margin.right + 32}" y="${legendY + 1}" font-size="12">${line.label}</text>`
    );
  });
  const ticksY = Array.from({ length: 6 }, (_, i) => (maxY / 5) * i).map(
    (mb) => `<text x="${margin.left - 8}" y="${y(mb) + 4}" font-size="11" text-anchor="end">${mb.toFixed(0)}</text>`,
  );
  const ticksX = Array.from({ length: 7 }, (_, i) => (maxX / 6) * i).map(
    (seconds) =>
      `<text x="${x(seconds)}" y="${height - margin.bottom + 16}" font-size="11" text-anchor="middle">${(seconds / 60).toFixed(0)}</text>`,
  );
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${margin.left}" y="18" font-size="13">${title}</text>`,
    `<line x1="${margin.left}" y1="${y(0)}" x2="${width - margin.right}" y2="${y(0)}" stroke="#444"/>`,
    `<line x1="${margin.left}" y1="${y(0)}" x2="${margin.left}" y2="${margin.top}" stroke="#444"/>`,
    ...ticksY,
    ...ticksX,
    `<text x="${(margin.left + width - margin.right) / 2}" y="${height - 6}" font-size="12" text-anchor="middle">minutes</text>`,
    `<text x="14" y="${height / 2}" font-size="12" transform="rotate(-90 14 ${height / 2})" text-anchor="middle">MB</text>`,
    ...lines,
    "</svg>",
    "",
  ].join("\n");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
