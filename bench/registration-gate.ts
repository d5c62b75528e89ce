/**
 * What the routing gate adds to a registration (docs/routing.md#the-routing-gate): RegisterSkill
 * through gRPC against a catalog of the development set's tools, alternating registrations with
 * three example queries (the gate ranks them) and without any (no gate), one at a time, warm pool on.
 * The difference of the two is the gate's cost on the caller's wait. Also prints how many examples
 * the gate found. Needs Docker.
 *
 *     npx tsx bench/registration-gate.ts [dataset-dir]
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { startTestEngine } from "../test/support/test-engine.js";

const dir = path.resolve(process.argv[2] ?? path.join(import.meta.dirname, "..", "..", "shared", "bench"));
const readJsonl = <T>(file: string): T[] =>
  readFileSync(path.join(dir, file), "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as T);
const tools = readJsonl<{ name: string; description: string }>("tools.jsonl");
const queries = readJsonl<{ query: string; relevant: string[] }>("queries.jsonl");
const CATALOG = Number(process.env.BENCH_GATE_CATALOG ?? 100);
const PAIRS = Number(process.env.BENCH_GATE_PAIRS ?? 20);
const echo = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";
const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.floor(values.length * p)] ?? 0;
const skillName = (name: string) => name.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);

async function main(): Promise<void> {
  const engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: "on" } });
  try {
    const register = async (tool: { name: string; description: string }, exampleQueries: string[]) => {
      const started = performance.now();
      const response = await engine.client.register(
        { name: skillName(tool.name), description: tool.description, code: echo, testPayload: "{}", exampleQueries },
        120_000,
      );
      return { ms: performance.now() - started, response };
    };
    const catalog = tools.slice(0, CATALOG);
    for (const tool of catalog) await register(tool, []);
    const rest = tools.slice(CATALOG);
    const examplesOf = (name: string) => queries.filter((q) => q.relevant.length === 1 && q.relevant[0] === name).map((q) => q.query);
    const candidates = rest.filter((t) => examplesOf(t.name).length >= 3);
    const withGate: number[] = [];
    const without: number[] = [];
    let found = 0;
    let ranked = 0;
    for (let i = 0; i + 1 < candidates.length && withGate.length < PAIRS; i += 2) {
      const gated = candidates[i] as { name: string; description: string };
      const plain = candidates[i + 1] as { name: string; description: string };
      const a = await register(gated, examplesOf(gated.name).slice(0, 3));
      withGate.push(a.ms);
      for (const example of a.response.routingGate?.examples ?? []) {
        ranked++;
        if (example.found) found++;
      }
      without.push((await register(plain, [])).ms);
    }
    console.log(`catalog ${CATALOG} skills; ${withGate.length} registrations each way, one at a time`);
    console.log(
      `RegisterSkill with 3 example queries (gate): p50 ${pct(withGate, 0.5).toFixed(1)} ms, p95 ${pct(withGate, 0.95).toFixed(1)} ms`,
    );
    console.log(
      `RegisterSkill without example queries:     p50 ${pct(without, 0.5).toFixed(1)} ms, p95 ${pct(without, 0.95).toFixed(1)} ms`,
    );
    console.log(`examples found by the gate: ${found} of ${ranked}`);
  } finally {
    await engine.dispose();
  }
}

await main();
