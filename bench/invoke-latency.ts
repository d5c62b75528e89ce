/**
 * npm run bench: InvokeSkill round trip through gRPC, against baselines measured in the same run
 * on the same machine: `docker run --rm` of the same image (what container-per-call sandbox
 * services do) and a bare `python3` process. Prints figures; asserts nothing.
 */
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import pino from "pino";
import { startSkillEngine } from "../src/app.js";
import { loadConfig } from "../src/config/index.js";
import { connect } from "../test/support/test-engine.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 20);
const CODE = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";

function stats(samples: number[]): { median: number; p95: number; min: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
  return { median: at(0.5), p95: at(0.95), min: sorted[0] as number };
}

function time(work: () => void): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-"));
  const config = loadConfig({
    SKILL_ENGINE_PORT: "0",
    SKILL_ENGINE_HOME: path.join(root, "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "warn",
  });
  const app = await startSkillEngine(config, pino({ level: "warn" }));
  const client = connect(app.port);
  try {
    await client.register({ name: "echo", code: CODE, testPayload: '{"warm": true}' });
    await client.invoke("echo", '{"i": -1}'); // warm-up

    const invoke: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const started = performance.now();
      const { result } = await client.invoke("echo", JSON.stringify({ i }));
      invoke.push(performance.now() - started);
      if (!result?.success) throw new Error(`invocation failed: ${result?.errorSummary}`);
    }

    const dockerRun: number[] = [];
    for (let i = 0; i < Math.min(ROUNDS, 10); i++) {
      dockerRun.push(
        time(() =>
          execFileSync("docker", ["run", "--rm", "--network", "none", config.image, "python3", "-c", "print(1)"], { stdio: "ignore" }),
        ),
      );
    }

    const bare: number[] = [];
    for (let i = 0; i < ROUNDS; i++) bare.push(time(() => execFileSync("/usr/bin/python3", ["-c", "print(1)"], { stdio: "ignore" })));

    const rows = [
      ["InvokeSkill round trip (gRPC → container → result)", stats(invoke)],
      ["baseline: docker run --rm (container per call)", stats(dockerRun)],
      ["baseline: bare python3 process", stats(bare)],
    ] as const;
    console.log(`\n${"what".padEnd(52)} ${"median".padStart(9)} ${"p95".padStart(9)} ${"min".padStart(9)}`);
    for (const [label, s] of rows) {
      console.log(`${label.padEnd(52)} ${s.median.toFixed(1).padStart(7)}ms ${s.p95.toFixed(1).padStart(7)}ms ${s.min.toFixed(1).padStart(7)}ms`);
    }
    const ratio = stats(invoke).median / stats(dockerRun).median;
    console.log(`\nInvokeSkill median is ${ratio.toFixed(2)}× the docker-run baseline (${ROUNDS} rounds).`);
  } finally {
    client.close();
    await app.close();
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
