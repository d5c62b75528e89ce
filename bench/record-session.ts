/**
 * npm run bench:learning: the cost of RecordSession (docs/learning.md#measuring-it).
 *
 * Through the real service (gRPC on 127.0.0.1, the registry a real SQLite file): records 10,000
 * sessions of one agent, each 200 tool calls drawn from a library of 60 routines (fixed sequences
 * of 3 to 8 calls over 40 tools with fixed argument shapes) with one call in ten replaced by a
 * random tool, so patterns repeat across sessions as an agent's habits do. Then times 50 further
 * 200-call sessions (p50, p95, mean) and reports the file sizes. Deterministic (seeded).
 *
 * Prints the figures and writes bench/results/record-session-latest.json.
 */
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { startTestEngine } from "../test/support/test-engine.js";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const CALLS = 200;
const MEASURED = 50;
const CONCURRENCY = 4;

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

const engine = await startTestEngine();
try {
  const client = engine.client;
  const record = (key: string, toolCalls: ToolCall[]) => client.call(client.raw.recordSession, { sessionKey: key, toolCalls }, 120_000);
  const fillStarted = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < SESSIONS) {
        const key = `fill-${next++}`;
        await record(key, session());
        if (next % 1000 === 0) process.stderr.write(`recorded ${next} sessions\n`);
      }
    }),
  );
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
