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
 * Then large sessions (docs/learning.md#large-sessions): on a fresh registry, 60 sessions of 10,000
 * calls (BENCH_LARGE_SESSIONS, BENCH_LARGE_CALLS), each call one of the 40 tools at random (so nearly
 * every window is a new pattern: the worst case for storage), sent by one agent from a child process,
 * 16 at a time, while another agent calls WhoAmI back to back from this one: its latency (p50, p95,
 * max), the longest event-loop stall of this process (the service runs in it) and how much
 * registry.db and its WAL grew.
 *
 * Prints the figures and writes bench/results/record-session-latest.json.
 */
import { spawn } from "node:child_process";
import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import type { ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { LearningStore, sessionWindows, shapeOf } from "../src/learning/index.js";
import { openRegistryDatabase } from "../src/sqlite/index.js";
import { connect, makeDirs, startTestEngine } from "../test/support/test-engine.js";

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10_000);
const CALLS = 200;
const MEASURED = 50;
const LARGE_SESSIONS = Number(process.env.BENCH_LARGE_SESSIONS ?? 60);
const LARGE_CALLS = Number(process.env.BENCH_LARGE_CALLS ?? 10_000);
const LARGE_AT_ONCE = 16;

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

function session(size = CALLS): ToolCall[] {
  const calls: ToolCall[] = [];
  while (calls.length < size) {
    for (const step of pick(ROUTINES)) {
      const tool = random() < 0.1 ? pick(TOOLS) : step;
      const args = Object.fromEntries(tool.keys.map((k) => [k, Math.floor(random() * 1000)]));
      calls.push({ tool: tool.tool, arguments: JSON.stringify(args) });
      if (calls.length === size) break;
    }
  }
  return calls;
}

/**
 * mulberry32, seeded: the large sessions need every call drawn afresh, and `random` above (kept so the
 * first part's figures stay comparable) repeats itself after a few thousand draws, since its product
 * exceeds a double's exact range.
 */
let largeSeed = 7;
const uniform = (): number => {
  largeSeed = (largeSeed + 0x6d2b79f5) | 0;
  let t = Math.imul(largeSeed ^ (largeSeed >>> 15), 1 | largeSeed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
};

/** Calls of random tools: nearly every window of such a session is a pattern seen nowhere else. */
function randomSession(size: number): ToolCall[] {
  return Array.from({ length: size }, () => {
    const tool = TOOLS[Math.floor(uniform() * TOOLS.length)] as (typeof TOOLS)[number];
    return { tool: tool.tool, arguments: JSON.stringify(Object.fromEntries(tool.keys.map((k) => [k, Math.floor(uniform() * 1000)]))) };
  });
}

if (process.env.BENCH_ROLE === "bulk-load") {
  await bulkLoad();
  process.exit(0);
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
        const at = new Date().toISOString();
        store.countSessionSlice("local", key, hashes, at);
        store.saveSession("local", key, calls.length, at);
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
    largeSessions: LARGE_SESSIONS > 0 ? await largeSessions() : undefined,
  };
  process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
  const results = path.join(path.dirname(fileURLToPath(import.meta.url)), "results");
  await mkdir(results, { recursive: true });
  await writeFile(path.join(results, "record-session-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
} finally {
  await engine.dispose();
}

/**
 * Large sessions from one agent, 16 at a time, while another agent asks WhoAmI back to back (a fresh
 * registry). The large sessions are sent by a child process, so that building and encoding them does
 * not stall this process, whose event loop is the service's.
 */
async function largeSessions(): Promise<Record<string, unknown>> {
  const tokens = { bulk: "bulk-token-0123456789", other: "other-token-0123456789" };
  const large = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: `bulk=${tokens.bulk},other=${tokens.other}` } });
  const other = connect(large.app.port, tokens.other);
  try {
    const sizes = async (): Promise<{ db: number; wal: number }> => ({
      db: (await stat(path.join(large.home, "registry.db"))).size,
      wal: await stat(path.join(large.home, "registry.db-wal")).then(
        (s) => s.size,
        () => 0,
      ),
    });
    const before = await sizes();
    const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, BENCH_ROLE: "bulk-load", BENCH_LOAD_PORT: String(large.app.port), BENCH_LOAD_TOKEN: tokens.bulk },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    // The child says "ready" once its sessions are built, just before it sends the first.
    await new Promise<void>((resolve) => child.stdout.on("data", () => output.includes("ready") && resolve()));
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    const whoAmI: number[] = [];
    let recording = true;
    const asking = (async () => {
      while (recording) {
        const started = performance.now();
        await other.call(other.raw.whoAmI, {}, 120_000);
        whoAmI.push(performance.now() - started);
      }
    })();
    const code = await exited;
    recording = false;
    await asking;
    delay.disable();
    if (code !== 0) throw new Error(`the bulk-load process exited with ${code}`);
    const load = JSON.parse(output.slice(output.indexOf("{"))) as { refused: number; seconds: number; firstRefusal: string };
    const after = await sizes();
    whoAmI.sort((a, b) => a - b);
    const q = (p: number) => round(whoAmI[Math.min(whoAmI.length - 1, Math.ceil(p * whoAmI.length) - 1)] as number);
    return {
      sessions: LARGE_SESSIONS,
      callsPerSession: LARGE_CALLS,
      atOnce: LARGE_AT_ONCE,
      ...load,
      otherAgentWhoAmIMs: { calls: whoAmI.length, p50: q(0.5), p95: q(0.95), max: q(1) },
      longestEventLoopStallMs: round(delay.max / 1e6),
      registryGrowthBytes: after.db - before.db,
      walBytes: after.wal,
    };
  } finally {
    other.close();
    await large.dispose();
  }
}

/** The child process of {@link largeSessions}: builds the sessions, sends them 16 at a time, prints what happened. */
async function bulkLoad(): Promise<void> {
  const bulk = connect(Number(process.env.BENCH_LOAD_PORT), process.env.BENCH_LOAD_TOKEN);
  const sessions = Array.from({ length: LARGE_SESSIONS }, () => randomSession(LARGE_CALLS));
  process.stdout.write("ready\n");
  const started = performance.now();
  let next = 0;
  let refused = 0;
  let firstRefusal = "";
  await Promise.all(
    Array.from({ length: LARGE_AT_ONCE }, async () => {
      while (next < sessions.length) {
        const i = next++;
        await bulk
          .call(bulk.raw.recordSession, { sessionKey: `large-${i}`, toolCalls: sessions[i] as ToolCall[] }, 600_000)
          .catch((error: unknown) => {
            refused++;
            firstRefusal ||= error instanceof Error ? error.message : String(error);
          });
      }
    }),
  );
  bulk.close();
  process.stdout.write(`${JSON.stringify({ refused, firstRefusal, seconds: round((performance.now() - started) / 1000) })}\n`);
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
