/**
 * npm run bench (invocation part). Starts the real service as its own process — once with the
 * warm pool, once cold — and measures, in one run, side by side:
 * - InvokeSkill latency p50/p95/p99 at concurrency 1, 4 and 8, and throughput;
 * - baselines on the same engine, with exactly the sandbox's hardening and limits (the service's
 *   own container spec): `docker run --rm` of the same skill through the CLI, a dockerode
 *   create/start/wait/remove per call; and a bare python3 running the same skill (the floor);
 * - RegisterSkill latency (normalize + guard + TDD + persist);
 * - the service's resident memory at rest and under load.
 * Prints a table with ratios to each baseline and writes the figures to bench/results/.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type Docker from "dockerode";
import DockerClient from "dockerode";
import { loadConfig } from "../src/config/index.js";
import { sandboxContainerSpec } from "../src/execution/index.js";
import { spawnService, type ServiceProcess } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
const IMAGE = process.env.SKILL_ENGINE_IMAGE ?? "skill-engine-sandbox:latest";
const SKILL = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'echo': args}))\n";
const PAYLOAD = '{"n": 1}';

interface Stats {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
}

function stats(samples: number[]): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return {
    n: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
  };
}

async function rssMb(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function timed(work: () => Promise<unknown> | unknown): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** `concurrency` callers, each invoking in a loop, `total` calls in all. */
async function load(
  client: TestClient,
  concurrency: number,
  total: number,
): Promise<{ latencies: number[]; throughput: number; runMs: number[] }> {
  const latencies: number[] = [];
  const runMs: number[] = [];
  let remaining = total;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (remaining-- > 0) {
        const t0 = performance.now();
        const { result } = await client.invoke("echo", PAYLOAD);
        latencies.push(performance.now() - t0);
        if (!result?.success) throw new Error(`invocation failed: ${result?.errorSummary}`);
        runMs.push(result.durationMs);
      }
    }),
  );
  return { latencies, throughput: total / ((performance.now() - started) / 1000), runMs };
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

/** `docker run --rm` arguments with every setting of the service's container spec. */
function dockerRunArgs(spec: Docker.ContainerCreateOptions): string[] {
  const host = spec.HostConfig ?? {};
  const args = ["run", "--rm", "--network", "none", "--read-only", "--init", "--cap-drop", "ALL"];
  for (const option of (host.SecurityOpt ?? []) as string[]) args.push("--security-opt", option);
  args.push("--user", spec.User ?? "", "--workdir", spec.WorkingDir ?? "/tmp");
  args.push("--pids-limit", String(host.PidsLimit), "--memory", `${host.Memory}b`, "--memory-swap", `${host.MemorySwap}b`);
  args.push("--cpus", String((host.NanoCpus ?? 1e9) / 1e9), "--shm-size", `${host.ShmSize}b`, "--log-driver", "none");
  for (const [target, options] of Object.entries(host.Tmpfs ?? {})) args.push("--tmpfs", `${target}:${options}`);
  for (const limit of host.Ulimits ?? []) args.push("--ulimit", `${limit.Name}=${limit.Soft}:${limit.Hard}`);
  for (const mount of host.Mounts ?? []) args.push("-v", `${mount.Source}:${mount.Target}${mount.ReadOnly ? ":ro" : ""}`);
  for (const variable of spec.Env ?? []) args.push("-e", variable);
  return [...args, spec.Image ?? IMAGE, ...(spec.Cmd ?? [])];
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-"));
  const docker = new DockerClient({ socketPath: "/var/run/docker.sock" });
  const figures: Record<string, unknown> = { date: new Date().toISOString(), rounds: ROUNDS, cpus: os.cpus().length };
  const rows: Array<[string, Stats, number | undefined]> = [];
  try {
    const services = { warm: await startService(root, true), cold: await startService(root, false) };
    const register: number[] = [];
    for (const [kind, { client }] of Object.entries(services)) {
      for (let i = 0; i < 5; i++) {
        register.push(
          await timed(() => client.register({ name: i === 0 ? "echo" : `echo_${kind}_${i}`, code: SKILL, testPayload: PAYLOAD })),
        );
      }
    }
    rows.push(["RegisterSkill (normalize + guard + TDD + persist)", stats(register), undefined]);
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // let the pool fill
    const rest = { warm: await rssMb(services.warm.service.child.pid), cold: await rssMb(services.cold.service.child.pid) };

    const invoke: Record<string, unknown> = {};
    let peakRss = 0;
    for (const kind of ["warm", "cold"] as const) {
      const { client, service } = services[kind];
      await client.invoke("echo", PAYLOAD);
      for (const concurrency of [1, 4, 8]) {
        const sampler = setInterval(() => {
          void rssMb(service.child.pid).then((mb) => (peakRss = Math.max(peakRss, mb)));
        }, 200);
        const run = await load(client, concurrency, concurrency === 1 ? ROUNDS : ROUNDS * 2);
        clearInterval(sampler);
        const s = stats(run.latencies);
        invoke[`${kind}_c${concurrency}`] = { ...s, throughput: run.throughput, sandboxRunP50: stats(run.runMs).p50 };
        rows.push([`InvokeSkill ${kind}, concurrency ${concurrency}`, s, run.throughput]);
        if (kind === "warm") await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    }
    // Agents call a tool once per LLM turn, not back to back: with a pause between calls the pool
    // has refilled and the engine is idle, which is the latency an agent sees.
    const paced: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      paced.push(await timed(() => services.warm.client.invoke("echo", PAYLOAD)));
    }
    invoke.warm_paced = stats(paced);
    rows.splice(1, 0, ["InvokeSkill warm, one call every 300 ms (agent-like)", stats(paced), undefined]);
    figures.invoke = invoke;

    // Where the time of one warm invocation goes.
    const warmClient = services.warm.client;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const getSkill: number[] = [];
    for (let i = 0; i < ROUNDS; i++) getSkill.push(await timed(() => warmClient.get("echo")));
    figures.breakdown = {
      warmRoundTripP50: (invoke.warm_c1 as Stats).p50,
      sandboxRunP50: (invoke.warm_c1 as { sandboxRunP50: number }).sandboxRunP50,
      grpcAndReadP50: stats(getSkill).p50,
    };

    // Baselines on the same engine.
    const skillDir = path.join(root, "baseline");
    await mkdir(skillDir, { recursive: true });
    await writeFile(path.join(skillDir, "skill.py"), SKILL);
    // Like for like: the service's own spec (hardening, limits, read-only bind of the run dir).
    // The baseline runs the skill directly on its payload (the service hands it over on stdin).
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
    const dockerRun: number[] = [];
    for (let i = 0; i < Math.min(ROUNDS, 15); i++) {
      dockerRun.push(await timed(() => execFileSync("docker", dockerRunArgs(spec), { stdio: "ignore" })));
    }
    const dockerode: number[] = [];
    for (let i = 0; i < Math.min(ROUNDS, 15); i++) {
      dockerode.push(
        await timed(async () => {
          const container = await docker.createContainer(spec);
          await container.start();
          await container.wait();
          await container.remove({ force: true });
        }),
      );
    }
    const bare: number[] = [];
    for (let i = 0; i < ROUNDS; i++)
      bare.push(await timed(() => execFileSync("/usr/bin/python3", [path.join(skillDir, "skill.py"), PAYLOAD], { stdio: "ignore" })));
    const baselines = { dockerRun: stats(dockerRun), dockerode: stats(dockerode), barePython: stats(bare) };
    figures.baselines = baselines;
    rows.push(["baseline: docker run --rm (CLI)", baselines.dockerRun, undefined]);
    rows.push(["baseline: dockerode create/start/wait/remove", baselines.dockerode, undefined]);
    rows.push(["baseline: bare python3 (the floor)", baselines.barePython, undefined]);

    const load8 = { warm: await rssMb(services.warm.service.child.pid), cold: await rssMb(services.cold.service.child.pid) };
    figures.memoryMb = { atRestWarm: rest.warm, atRestCold: rest.cold, peakUnderLoad: peakRss, afterLoadWarm: load8.warm };
    figures.register = stats(register);

    const warm1 = invoke.warm_paced as Stats;
    console.log(`\n${"what".padEnd(52)} ${"p50".padStart(8)} ${"p95".padStart(8)} ${"p99".padStart(8)} ${"runs/s".padStart(7)}`);
    for (const [label, s, throughput] of rows) {
      const t = throughput === undefined ? "" : throughput.toFixed(1);
      console.log(
        `${label.padEnd(52)} ${s.p50.toFixed(1).padStart(6)}ms ${s.p95.toFixed(1).padStart(6)}ms ${s.p99.toFixed(1).padStart(6)}ms ${t.padStart(7)}`,
      );
    }
    console.log(
      `\nwarm InvokeSkill p50 (agent-like pacing) = ${warm1.p50.toFixed(1)} ms: ` +
        `${(baselines.dockerRun.p50 / warm1.p50).toFixed(1)}× faster than docker run, ` +
        `${(baselines.dockerode.p50 / warm1.p50).toFixed(1)}× faster than dockerode per call, ` +
        `${(warm1.p50 / baselines.barePython.p50).toFixed(1)}× the bare python3 floor`,
    );
    const breakdown = figures.breakdown as { warmRoundTripP50: number; sandboxRunP50: number; grpcAndReadP50: number };
    console.log(
      `one warm invocation (p50s): ${breakdown.warmRoundTripP50.toFixed(1)} ms in all = ${breakdown.sandboxRunP50.toFixed(1)} ms from job hand-over to the skill's exit marker` +
        ` + ${breakdown.grpcAndReadP50.toFixed(1)} ms gRPC round trip and registry read (a GetSkill) + the rest (skill file write, container inspect, telemetry commit)`,
    );
    console.log(`service RSS: ${rest.warm.toFixed(0)} MB at rest (warm pool on), ${peakRss.toFixed(0)} MB peak under load`);

    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `invoke-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(out, "invoke-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), file)}`);
    for (const { service, client } of Object.values(services)) {
      client.close();
      await service.kill("SIGTERM");
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
