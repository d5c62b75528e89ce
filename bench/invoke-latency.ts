/**
 * npm run bench (invocation and registration part; docs/performance.md#the-benchmark). Starts the
 * real service as its own process — once with the warm pool, once cold — and measures, in one run,
 * side by side on the same engine:
 * - RegisterSkill against a warm InvokeSkill, alternating, one call every BENCH_PACE_MS (an agent's
 *   pacing: the pool has refilled between calls);
 * - runs/s and latency p50/p95 at concurrency 1, 4 and 8 (back to back) for warm, cold and a
 *   baseline that does what a typical sandbox library does: dockerode create/start/wait/remove per
 *   run, with exactly the service's container spec (hardening and limits);
 * - the engine's CPU per run: dockerd + containerd CPU time from /proc before and after each phase
 *   (the per-container shims exit with their container and are not counted), and the service's own;
 * - a bare python3 running the same skill (the floor).
 * Ratios (ours / baseline) are the last lines. Counts: BENCH_ROUNDS (runs per concurrency level,
 * default 48), BENCH_PACED (paced register/invoke pairs, default 40), BENCH_PACE_MS (default 300).
 */
import { execFileSync } from "node:child_process";
import { readdir, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import DockerClient from "dockerode";
import { loadConfig } from "../src/config/index.js";
import { sandboxContainerSpec } from "../src/execution/index.js";
import { spawnService, type ServiceProcess } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 48);
const PACED = Number(process.env.BENCH_PACED ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);
const CONCURRENCY = [1, 4, 8] as const;
const IMAGE = process.env.SKILL_ENGINE_IMAGE ?? "skill-engine-sandbox:latest";
const SKILL = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'echo': args}))\n";
const PAYLOAD = '{"n": 1}';
/**
 * What an agent's registrations look like: each new skill says what it does in its own words. (With one
 * shared description every registration was a near-duplicate of every skill before it, and its
 * answer listed them all: docs/learning.md#near-duplicates.)
 */
const DESCRIPTIONS = [
  "Convert a temperature from Celsius to Fahrenheit",
  "Count the words in a block of text",
  "Compute compound interest over a number of years",
  "Validate an email address and report what is wrong with it",
  "Parse an ISO 8601 date and return the weekday",
  "Summarise a CSV table: rows, columns and numeric column means",
  "Convert a Roman numeral to an integer",
  "Slugify a title for use in a URL",
  "Compute the great-circle distance between two coordinates",
  "Extract every hashtag from a social media post",
  "Check whether a string is a palindrome, ignoring punctuation",
  "Convert an amount between metric and imperial length units",
  "Find the median and quartiles of a list of numbers",
  "Generate an SQL INSERT statement from a JSON record",
  "Mask all but the last four digits of a card number",
  "Compute a loan's monthly repayment",
  "Detect the language of a short text by character frequencies",
  "Format a phone number in international notation",
  "Merge two sorted lists into one sorted list",
  "Compute the SHA-256 digest of a text",
];
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

interface Stats {
  n: number;
  p50: number;
  p95: number;
}

interface LoadFigures {
  runsPerSecond: number;
  latency: Stats;
  /** dockerd + containerd CPU milliseconds per run. */
  engineCpuMs: number;
  /** The service's own CPU milliseconds per run (0 for the baseline: it is this process). */
  serviceCpuMs: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95) };
}

async function timed(work: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** utime + stime of one process, in ms; 0 when it is gone. */
async function cpuMsOf(pid: number): Promise<number> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** The engine's long-lived processes: dockerd and containerd. */
async function enginePids(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, "utf8").catch(() => "");
    if (comm.trim() === "dockerd" || comm.trim() === "containerd") pids.push(Number(entry));
  }
  return pids;
}

async function engineCpuMs(pids: readonly number[]): Promise<number> {
  let total = 0;
  for (const pid of pids) total += await cpuMsOf(pid);
  return total;
}

/** `concurrency` callers, each running `once` in a loop, `total` runs in all; CPU measured around it. */
async function load(
  concurrency: number,
  total: number,
  once: () => Promise<void>,
  servicePid: number | undefined,
  engine: readonly number[],
): Promise<LoadFigures> {
  const latencies: number[] = [];
  let remaining = total;
  const engineBefore = await engineCpuMs(engine);
  const serviceBefore = servicePid === undefined ? 0 : await cpuMsOf(servicePid);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining-- > 0) latencies.push(await timed(once));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  // Background removals of the last runs belong to these runs' cost.
  await sleep(1_500);
  const engineAfter = await engineCpuMs(engine);
  const serviceAfter = servicePid === undefined ? 0 : await cpuMsOf(servicePid);
  return {
    runsPerSecond: total / seconds,
    latency: stats(latencies),
    engineCpuMs: (engineAfter - engineBefore) / total,
    serviceCpuMs: (serviceAfter - serviceBefore) / total,
  };
}

async function startService(root: string, pool: boolean): Promise<{ service: ServiceProcess; client: TestClient }> {
  const service = await spawnService({
    SKILL_ENGINE_HOME: path.join(root, pool ? "warm" : "cold", "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, pool ? "warm" : "cold", "sandbox"),
    // spawnService reads the "listening" line at info level to learn the port.
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: pool ? "on" : "off",
    SKILL_ENGINE_POOL_SIZE: "8",
    SKILL_ENGINE_MAX_CONCURRENT_RUNS: "8",
  });
  return { service, client: connect(service.port) };
}

async function invokeOnce(client: TestClient): Promise<void> {
  const { result } = await client.invoke("echo", PAYLOAD);
  if (!result?.success) throw new Error(`invocation failed: ${result?.errorSummary}`);
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-"));
  const docker = new DockerClient({ socketPath: "/var/run/docker.sock" });
  const engine = await enginePids();
  const figures: Record<string, unknown> = { date: new Date().toISOString(), rounds: ROUNDS, paced: PACED, cpus: os.cpus().length };
  const services: Array<{ service: ServiceProcess; client: TestClient }> = [];
  try {
    const warm = await startService(root, true);
    services.push(warm);
    const cold = await startService(root, false);
    services.push(cold);
    await warm.client.register({ name: "echo", code: SKILL, testPayload: PAYLOAD });
    await cold.client.register({ name: "echo", code: SKILL, testPayload: PAYLOAD });
    await sleep(3_000); // the pool fills

    // Agent-like: one call every PACE_MS, RegisterSkill and warm InvokeSkill alternating, so both
    // see the same machine. Half the registrations are new skills, half new versions of one.
    const register: number[] = [];
    const registerNew: number[] = [];
    const registerVersion: number[] = [];
    const invokePaced: number[] = [];
    for (let i = 0; i < PACED; i++) {
      await sleep(PACE_MS);
      const name = i % 2 === 0 ? `tool_${i}` : "tool_versions";
      const description =
        i % 2 === 0 ? (DESCRIPTIONS[(i / 2) % DESCRIPTIONS.length] as string) : "Echo the payload back (a skill revised many times)";
      const took = await timed(() => warm.client.register({ name, description, code: SKILL, testPayload: PAYLOAD }));
      register.push(took);
      (i % 2 === 0 ? registerNew : registerVersion).push(took);
      await sleep(PACE_MS);
      invokePaced.push(await timed(() => invokeOnce(warm.client)));
    }
    figures.registerPaced = stats(register);
    // A new skill's description is new: the near-duplicate screen runs the embedding model on the
    // caller's wait (docs/performance.md#registration); a new version's was embedded before.
    figures.registerNewSkillPaced = stats(registerNew);
    figures.registerNewVersionPaced = stats(registerVersion);
    figures.invokeWarmPaced = stats(invokePaced);

    // Like for like: the service's own spec (hardening, limits, read-only bind of the run dir).
    // The baseline runs the skill directly on its payload and reads no output (which favours it).
    const skillDir = path.join(root, "baseline");
    await mkdir(skillDir, { recursive: true });
    await writeFile(path.join(skillDir, "skill.py"), SKILL);
    const spec = {
      ...sandboxContainerSpec({
        image: IMAGE,
        runtime: undefined,
        limits: loadConfig({}).limits,
        runDir: skillDir,
        instanceTag: "bench-baseline",
        bootId: "bench",
        runId: "bench-baseline",
        command: { kind: "cold", skillName: "baseline", purpose: "invoke" },
      }),
      Cmd: ["python3", "/sandbox/skill.py", PAYLOAD],
      AttachStdin: false,
      OpenStdin: false,
    };
    const baselineOnce = async (): Promise<void> => {
      const container = await docker.createContainer(spec);
      await container.start();
      const { StatusCode } = (await container.wait()) as { StatusCode: number };
      await container.remove({ force: true });
      if (StatusCode !== 0) throw new Error(`baseline run exited ${StatusCode}`);
    };

    const loadFigures: Record<string, LoadFigures> = {};
    for (const concurrency of CONCURRENCY) {
      const total = Math.max(concurrency * 4, concurrency === 1 ? Math.ceil(ROUNDS / 2) : ROUNDS);
      // Interleaved per level so that the three see the same background load.
      loadFigures[`warm_c${concurrency}`] = await load(concurrency, total, () => invokeOnce(warm.client), warm.service.child.pid, engine);
      await sleep(3_000); // the pool refills
      loadFigures[`cold_c${concurrency}`] = await load(concurrency, total, () => invokeOnce(cold.client), cold.service.child.pid, engine);
      loadFigures[`baseline_c${concurrency}`] = await load(concurrency, total, baselineOnce, undefined, engine);
      await sleep(3_000);
    }
    figures.load = loadFigures;

    const bare: number[] = [];
    for (let i = 0; i < 20; i++)
      bare.push(await timed(() => execFileSync("/usr/bin/python3", [path.join(skillDir, "skill.py"), PAYLOAD], { stdio: "ignore" })));
    figures.barePython = stats(bare);

    const ms = (value: number) => `${value.toFixed(1).padStart(7)} ms`;
    console.log(
      `\n${"what".padEnd(34)} ${"runs/s".padStart(7)} ${"p50".padStart(10)} ${"p95".padStart(10)} ${"engine CPU/run".padStart(15)} ${"service CPU/run".padStart(16)}`,
    );
    const regStats = figures.registerPaced as Stats;
    const invStats = figures.invokeWarmPaced as Stats;
    const regNew = figures.registerNewSkillPaced as Stats;
    const regVersion = figures.registerNewVersionPaced as Stats;
    console.log(`${`RegisterSkill, paced ${PACE_MS} ms`.padEnd(34)} ${"".padStart(7)} ${ms(regStats.p50)} ${ms(regStats.p95)}`);
    console.log(`${"  of which new skills".padEnd(34)} ${"".padStart(7)} ${ms(regNew.p50)} ${ms(regNew.p95)}`);
    console.log(`${"  of which new versions".padEnd(34)} ${"".padStart(7)} ${ms(regVersion.p50)} ${ms(regVersion.p95)}`);
    console.log(`${`InvokeSkill warm, paced ${PACE_MS} ms`.padEnd(34)} ${"".padStart(7)} ${ms(invStats.p50)} ${ms(invStats.p95)}`);
    for (const concurrency of CONCURRENCY) {
      for (const kind of ["warm", "cold", "baseline"] as const) {
        const f = loadFigures[`${kind}_c${concurrency}`] as LoadFigures;
        const label = kind === "baseline" ? `baseline (dockerode), c=${concurrency}` : `InvokeSkill ${kind}, c=${concurrency}`;
        console.log(
          `${label.padEnd(34)} ${f.runsPerSecond.toFixed(1).padStart(7)} ${ms(f.latency.p50)} ${ms(f.latency.p95)} ${ms(f.engineCpuMs).padStart(15)} ${(kind === "baseline" ? "" : ms(f.serviceCpuMs)).padStart(16)}`,
        );
      }
    }
    const bareStats = figures.barePython as Stats;
    console.log(`${"bare python3 (the floor)".padEnd(34)} ${"".padStart(7)} ${ms(bareStats.p50)} ${ms(bareStats.p95)}`);

    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `invoke-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(out, "invoke-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`\nfigures written to ${path.relative(process.cwd(), file)}`);

    // The ratios, last.
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a");
    console.log(
      `RegisterSkill p50 / warm InvokeSkill p50 (paced) = ${ratio(regStats.p50, invStats.p50)} (target ≤ 1.5); ` +
        `new skills ${ratio(regNew.p50, invStats.p50)}, new versions ${ratio(regVersion.p50, invStats.p50)}`,
    );
    for (const concurrency of CONCURRENCY) {
      const w = loadFigures[`warm_c${concurrency}`] as LoadFigures;
      const c = loadFigures[`cold_c${concurrency}`] as LoadFigures;
      const b = loadFigures[`baseline_c${concurrency}`] as LoadFigures;
      console.log(
        `c=${concurrency}: runs/s warm/baseline = ${ratio(w.runsPerSecond, b.runsPerSecond)}, cold/baseline = ${ratio(c.runsPerSecond, b.runsPerSecond)}; ` +
          `p50 warm/baseline = ${ratio(w.latency.p50, b.latency.p50)}; engine CPU/run warm/baseline = ${ratio(w.engineCpuMs, b.engineCpuMs)}`,
      );
    }
  } finally {
    for (const { service, client } of services) {
      client.close();
      await service.kill("SIGTERM");
    }
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
