/**
 * npm run bench:learning: the cost of RecordSession (docs/learning.md#measuring-it).
 *
 * 10,000 sessions of one agent, each 200 tool calls drawn from a library of 60 routines (fixed
 * sequences of 3 to 8 calls over 40 tools with fixed argument shapes) with one call in ten replaced
 * by a random tool, so patterns repeat across sessions as an agent's habits do. The fill writes them
 * into registry.db with the service's own learning store and pattern code (sessions and pattern
 * counts, 500 sessions a transaction; candidate selection skipped), because 10,000 sessions through
 * gRPC with a durable commit each take over an hour on this machine. Then the real service starts
 * on that registry and 50 further 200-call sessions go through RecordSession over gRPC, timed (p50,
 * p95, mean), with the registry's size. Deterministic (seeded).
 *
 * Prints the figures and writes bench/results/record-session-latest.json.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { LearningStore, sessionWindows, shapeOf } from "../src/learning/index.js";
import { openRegistryDatabase } from "../src/sqlite/index.js";
import { makeDirs, startTestEngine } from "../test/support/test-engine.js";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const CALLS = 200;
const MEASURED = 50;

let seed = 42;
const random = (): number => {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
};
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

const TOOLS = Array.from({ length: 40 }, (_, i) => ({
  tool: `tool_${i}`,
  keys: Array.from({ length: 1 + (i % 3) }, (_, k) => `k${(i + k) % 7}`),
}));
const ROUTINES = Array.from({ length: 60 }, () => Array.from({ length: 3 + Math.floor(random() * 6) }, () => pick(TOOLS)));

function session(): ToolCall[] {
  const calls: ToolCall[] = [];
  while (calls.length < CALLS) {
    for (const step of pick(ROUTINES)) {
      const tool = random() < 0.1 ? pick(TOOLS) : step;
      const args = Object.fromEntries(tool.keys.map((k) => [k, Math.floor(random() * 1000)]));
      calls.push({ tool: tool.tool, arguments: JSON.stringify(args) });
      if (calls.length === CALLS) break;
    }
  }
  return calls;
}

const dirs = await makeDirs();
await mkdir(dirs.home, { recursive: true });
const fillStarted = performance.now();
{
  const db = openRegistryDatabase(path.join(dirs.home, "registry.db"), { durable: false });
  const store = new LearningStore(db);
  for (let first = 0; first < SESSIONS; first += 500) {
    const batch = Array.from({ length: Math.min(500, SESSIONS - first) }, () => session());
    store.transaction("fill", () => {
      batch.forEach((calls, i) => {
        const key = `fill-${first + i}`;
        const steps = calls.map((c) => ({ tool: c.tool, shape: shapeOf(JSON.parse(c.arguments)) }));
        const hashes = sessionWindows(steps, 3, 6).map((w) => w.hash);
        store.countSession("local", key, hashes);
        store.saveSession("local", key, hashes, calls.length, new Date().toISOString());
      });
    });
    process.stderr.write(`filled ${first + batch.length} sessions\n`);
  }
  db.close();
}
const engine = await startTestEngine({ dirs });
try {
  const client = engine.client;
  const record = (key: string, toolCalls: ToolCall[]) => client.call(client.raw.recordSession, { sessionKey: key, toolCalls }, 120_000);
  const fillSeconds = (performance.now() - fillStarted) / 1000;
  const times: number[] = [];
  for (let i = 0; i < MEASURED; i++) {
    const calls = session();
    const started = performance.now();
    await record(`measured-${i}`, calls);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.ceil(q * times.length) - 1)] as number;
  const candidates = (await client.call(client.raw.listCandidates, { status: 0 })).candidates.length;
  const dbBytes = (await stat(path.join(engine.home, "registry.db"))).size;
  const walBytes = await stat(path.join(engine.home, "registry.db-wal")).then(
    (s) => s.size,
    () => 0,
  );
  const figures = {
    sessionsRecorded: SESSIONS,
    callsPerSession: CALLS,
    fillSeconds: Math.round(fillSeconds),
    recordSessionMs: { p50: round(at(0.5)), p95: round(at(0.95)), mean: round(times.reduce((a, b) => a + b, 0) / times.length) },
    candidates,
    registryBytes: dbBytes + walBytes,
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  const results = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  await mkdir(results, { recursive: true });
  await writeFile(path.join(results, "record-session-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await engine.dispose();
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
