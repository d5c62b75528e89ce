/**
 * npm run bench (egress part; docs/performance.md#egress). Starts the real service as its own process,
 * warm pool on, with a loopback HTTP server the host map names `api.bench.test`, and measures in one run:
 * - warm InvokeSkill of a skill that makes one HTTP request to it through the run's egress gateway;
 * - the same request made by a bare `python3` on the host (a process per request, as a run is);
 * - warm InvokeSkill of the same skill making no request (the sandbox's own share);
 * alternating, one call every BENCH_PACE_MS, BENCH_PACED times each. Nothing leaves the machine.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";
import { spawnService } from "../test/support/service-process.js";
import { connect } from "../test/support/test-engine.js";

const run = promisify(execFile);
const PACED = Number(process.env.BENCH_PACED ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);

const SKILL = `import json, sys, urllib.request
args = json.loads(sys.argv[1])
if args.get("url"):
    with urllib.request.urlopen(args["url"], timeout=10) as r:
        print(json.dumps({"status": r.status, "bytes": len(r.read())}))
else:
    print(json.dumps({"status": 0}))
`;

interface Stats {
  n: number;
  p50: number;
  p95: number;
}

function stats(samplesMs: number[]): Stats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const server = createServer((_request, response) => response.end('{"forecast": "sunny"}'));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const root = await mkdtemp(path.join(os.tmpdir(), "se-bench-egress-"));
  const service = await spawnService({
    SKILL_ENGINE_HOME: path.join(root, "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: "on",
    SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: "api.bench.test",
    SKILL_ENGINE_EGRESS_HOST_MAP: `api.bench.test=127.0.0.1:${port}`,
  });
  const client = connect(service.port);
  const figures: Record<string, unknown> = { date: new Date().toISOString(), paced: PACED, paceMs: PACE_MS, cpus: os.cpus().length };
  try {
    await client.register({
      name: "egress_bench",
      description: "Fetch a forecast from a declared host",
      code: SKILL,
      testPayload: "{}",
      networkAllow: ["api.bench.test"],
    });
    await sleep(3_000); // the pool fills

    const invoke = async (url: string | undefined): Promise<number> => {
      const started = performance.now();
      const { result } = await client.invoke("egress_bench", JSON.stringify(url ? { url } : {}));
      const elapsed = performance.now() - started;
      if (!result?.success || (url && !result.stdout.includes('"status": 200'))) throw new Error(`the run failed: ${result?.errorSummary}`);
      return elapsed;
    };
    const bare = async (): Promise<number> => {
      const started = performance.now();
      const { stdout } = await run("python3", ["-c", SKILL, JSON.stringify({ url: `http://127.0.0.1:${port}/` })]);
      const elapsed = performance.now() - started;
      if (!stdout.includes('"status": 200')) throw new Error("the bare request failed");
      return elapsed;
    };
    const samples = { gateway: [] as number[], bare: [] as number[], none: [] as number[] };
    const orders = [
      ["gateway", "bare", "none"],
      ["none", "gateway", "bare"],
      ["bare", "none", "gateway"],
    ] as const;
    for (let i = 0; i < PACED; i++) {
      for (const kind of orders[i % orders.length] ?? orders[0]) {
        await sleep(PACE_MS);
        if (kind === "gateway") samples.gateway.push(await invoke("http://api.bench.test/forecast"));
        else if (kind === "bare") samples.bare.push(await bare());
        else samples.none.push(await invoke(undefined));
      }
    }
    figures.invokeWarmThroughGateway = stats(samples.gateway);
    figures.barePython = stats(samples.bare);
    figures.invokeWarmNoRequest = stats(samples.none);

    const ms = (value: number) => `${value.toFixed(1).padStart(8)} ms`;
    const row = (what: string, s: Stats) => console.log(`${what.padEnd(62)} ${String(s.n).padStart(3)} ${ms(s.p50)} ${ms(s.p95)}`);
    console.log(`\n${"what".padEnd(62)} ${"n".padStart(3)} ${"p50".padStart(11)} ${"p95".padStart(11)}`);
    row("InvokeSkill warm, one HTTP request through the gateway", figures.invokeWarmThroughGateway as Stats);
    row("bare python3 on the host, the same request (baseline)", figures.barePython as Stats);
    row("InvokeSkill warm, the same skill making no request", figures.invokeWarmNoRequest as Stats);
    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `egress-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), file)}`);
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a");
    const through = (figures.invokeWarmThroughGateway as Stats).p50;
    console.log(`p50 through the gateway / bare python3 = ${ratio(through, (figures.barePython as Stats).p50)}`);
    console.log(`p50 through the gateway / no request = ${ratio(through, (figures.invokeWarmNoRequest as Stats).p50)}`);
  } finally {
    client.close();
    await service.kill("SIGTERM");
    server.close();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
