/**
 * npm run bench:composition. Starts the real service as its own process (warm pool on, and again
 * cold) and measures in one run, interleaved round by round so both see the same machine:
 * - a 3-step composed skill invoked once (three sandbox runs inside one InvokeSkill);
 * - the same three skills invoked by the client as three InvokeSkill calls, each with the
 *   payload the composition would have built from the previous step's output.
 * Reports p50/p95 of both and the composition's overhead over the three calls (p50 − p50).
 * Writes the figures to bench/results/.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { spawnService, type ServiceProcess } from "../test/support/service-process.js";
import { connect, type TestClient } from "../test/support/test-engine.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const STEP = (label: string) => `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"n": args["n"] + 1, "by": "${label}"}))
`;
const SCHEMA = JSON.stringify({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });

function percentile(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

async function prepare(client: TestClient): Promise<void> {
  for (const label of ["s1", "s2", "s3"])
    await client.register({ name: label, code: STEP(label), parametersSchema: SCHEMA, testPayload: '{"n": 0}' });
  const step = (id: string, skill: string, args: unknown) => ({ id, skill, args: JSON.stringify(args), when: "", onFailure: 0 });
  await client.call(client.raw.registerComposedSkill, {
    name: "three_steps",
    description: "s1 → s2 → s3",
    parametersSchema: SCHEMA,
    steps: [
      step("a", "s1", { n: "{{params.n}}" }),
      step("b", "s2", { n: "{{steps.a.output.n}}" }),
      step("c", "s3", { n: "{{steps.b.output.n}}" }),
    ],
    output: "",
    testPayload: '{"n": 0}',
    visibility: 0,
    exampleQueries: [],
    onDuplicate: 0,
  });
}

async function measure(client: TestClient): Promise<{ composed: number[]; separate: number[] }> {
  const composed: number[] = [];
  const separate: number[] = [];
  // Warm-up: first runs pay for caches (schema compilation, page cache, pool refill).
  await client.invoke("three_steps", '{"n": 0}');
  const runComposed = async (): Promise<void> => {
    const one = await timed(() => client.invoke("three_steps", '{"n": 0}'));
    if (one.value.result?.stdout !== '{"n": 3, "by": "s3"}\n') throw new Error(`composition failed: ${JSON.stringify(one.value.result)}`);
    composed.push(one.ms);
  };
  const runSeparate = async (): Promise<void> => {
    const three = await timed(async () => {
      let payload = '{"n": 0}';
      for (const name of ["s1", "s2", "s3"]) {
        const { result } = await client.invoke(name, payload);
        if (!result?.success) throw new Error(`${name} failed: ${result?.errorSummary}`);
        payload = JSON.stringify({ n: (JSON.parse(result.stdout) as { n: number }).n });
      }
      return payload;
    });
    separate.push(three.ms);
  };
  // Alternating which goes first, so neither always finds the warm pool freshly refilled.
  for (let round = 0; round < ROUNDS; round++) {
    if (round % 2 === 0) {
      await runComposed();
      await runSeparate();
    } else {
      await runSeparate();
      await runComposed();
    }
  }
  return { composed, separate };
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "bench-composition-"));
  const services: ServiceProcess[] = [];
  const figures: Record<string, unknown> = { date: new Date().toISOString(), rounds: ROUNDS, cpus: os.cpus().length };
  try {
    for (const pool of [true, false]) {
      const mode = pool ? "warm" : "cold";
      const service = await spawnService({
        SKILL_ENGINE_HOME: path.join(root, mode, "home"),
        SKILL_ENGINE_SANDBOX_DIR: path.join(root, mode, "sandbox"),
        SKILL_ENGINE_LOG_LEVEL: "info",
        SKILL_ENGINE_POOL: pool ? "on" : "off",
        SKILL_ENGINE_POOL_SIZE: "4",
      });
      services.push(service);
      const client = connect(service.port);
      await prepare(client);
      const { composed, separate } = await measure(client);
      client.close();
      const summary = {
        composedP50: percentile(composed, 0.5),
        composedP95: percentile(composed, 0.95),
        separateP50: percentile(separate, 0.5),
        separateP95: percentile(separate, 0.95),
      };
      figures[mode] = { ...summary, overheadP50: summary.composedP50 - summary.separateP50, composed, separate };
      console.log(
        `${mode}: 3-step composition p50 ${summary.composedP50.toFixed(1)} ms (p95 ${summary.composedP95.toFixed(1)}); ` +
          `three InvokeSkill calls p50 ${summary.separateP50.toFixed(1)} ms (p95 ${summary.separateP95.toFixed(1)}); ` +
          `overhead p50 ${(summary.composedP50 - summary.separateP50).toFixed(1)} ms (${ROUNDS} rounds, interleaved)`,
      );
      await service.kill("SIGTERM");
    }
    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    await writeFile(path.join(out, "composition-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
  } finally {
    for (const service of services) await service.kill("SIGKILL").catch(() => undefined);
    await rm(root, { recursive: true, force: true });
  }
}

await main();
