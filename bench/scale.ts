/**
 * npm run bench:scale: the service at 1,000, 10,000 and 100,000 skills (docs/performance.md#scale),
 * in one run. Not part of `npm run bench`: the 100,000-skill library alone takes over ten minutes here.
 *
 * For each size a home is prepared offline through the control plane's own storage API, the steps a
 * registration commits after its test run (history file, dependency declaration, active file, the
 * registry's version; only the sandboxed test run is skipped), and the routing indexes are built with
 * the routing layer's own SkillRouter. Descriptions are distinct sentences from a grammar of actions,
 * objects, sources and outputs. Their vectors: the real MiniLM over a pool of BENCH_SCALE_POOL of them
 * (default 2,000, about 10 s); every other skill's vector is a random mix of two pool vectors plus a
 * little noise, renormalised, so every vector is distinct and lies where MiniLM's vectors lie (embedding
 * all 111,000 descriptions for real takes ~10 minutes on 2 cores: BENCH_SCALE_POOL=111000 does it). The
 * vectors go into the embedding cache, so start-up and RebuildIndexes cost the indexes, not the model.
 *
 * Measured at each size:
 * - in process (the routing layer over a second connection; each query embedded by the real MiniLM
 *   beforehand, its cost reported apart, as the issue measured routing): RouteSkills' ranking p50/p95 with the approximate vector path (the default above
 *   DEFAULT_APPROXIMATE_FROM entries) and with the exact sqlite-vec scan; the vector search alone both
 *   ways, and its recall@5 and @50 against the exact search, scoped as the local agent;
 * - the real service started on that home (time to serving after a restart, RSS), RouteSkills through
 *   gRPC, ListSkills' first and a middle page, the console's library page, 200 RegisterSkill calls
 *   (real test runs in Docker), RebuildIndexes, and `rebuild-registry` with the service stopped.
 * Each RegisterSkill is paired with one on a service over an empty library running beside it, alternately.
 *
 * Environment: BENCH_SCALE_SIZES (default 1000,10000,100000), BENCH_SCALE_REGISTRATIONS (200),
 * BENCH_SCALE_POOL (2000), BENCH_SCALE_QUERIES (100),
 * BENCH_SCALE_HOME_ONLY (a directory: prepare one home of the first size there, for profiling a start, and stop). Prints one table and writes bench/results/scale-latest.json.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { CanonicalStore, Composition, DEFAULT_HEALTH_POLICY, REGISTRY_FILE, rebuildRegistry, SkillRegistry } from "../src/control/index.js";
import { contentHash } from "../src/control/store/index.js";
import { CachedEmbedder, type Embedder, MiniLmEmbedder, SqliteEmbeddingStore, textHash } from "../src/embedding/index.js";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { documentText, KeywordIndex, SkillRouter, SqliteVecIndex, vectorPayloadOf } from "../src/routing/index.js";
import type { RoutableSkill } from "../src/routing/skill-router.js";
import { agentAudience, PUBLIC_AUDIENCE } from "../src/search/index.js";
import { openRegistryDatabase } from "../src/sqlite/index.js";
import { makeDirs, startTestEngine, type TestEngine } from "../test/support/test-engine.js";

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const SIZES = (process.env.BENCH_SCALE_SIZES ?? "1000,10000,100000").split(",").map(Number);
const REGISTRATIONS = Number(process.env.BENCH_SCALE_REGISTRATIONS ?? 200);
const POOL = Number(process.env.BENCH_SCALE_POOL ?? 2000);
const QUERIES = Number(process.env.BENCH_SCALE_QUERIES ?? 100);
const ROUTE_LIMIT = 5;
const PAGE_SIZE = 100;
/** The embedded default's one agent (no tokens): it owns most skills; one in five belongs to another agent and is not visible to it. */
const LOCAL = "local";
const SCOPE = { agentId: LOCAL, everything: false } as const;
const FILTER = { statuses: ["active", "degraded"], audiences: [PUBLIC_AUDIENCE, agentAudience(LOCAL)] };
const SKILL_CODE = 'import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({"ok": True, "echo": args}))\n';

const started = performance.now();
function progress(message: string): void {
  console.log(`[${((performance.now() - started) / 1000).toFixed(1).padStart(7)}s] ${message}`);
}

// ---------------------------------------------------------------------------------------------
// Descriptions and vectors

const ACTIONS = [
  "Fetch",
  "List",
  "Convert",
  "Parse",
  "Validate",
  "Summarize",
  "Compute",
  "Search",
  "Resize",
  "Translate",
  "Extract",
  "Merge",
  "Sort",
  "Filter",
  "Download",
  "Upload",
  "Compress",
  "Encrypt",
  "Schedule",
  "Count",
  "Compare",
  "Rank",
  "Normalize",
  "Deduplicate",
  "Geocode",
];
const OBJECTS = [
  "exchange rates",
  "weather forecasts",
  "invoice totals",
  "CSV rows",
  "PDF pages",
  "git commits",
  "movie credits",
  "song lyrics",
  "stock prices",
  "calendar events",
  "email threads",
  "image thumbnails",
  "social media posts",
  "log lines",
  "sensor readings",
  "flight schedules",
  "recipes",
  "user profiles",
  "DNS records",
  "package versions",
  "support tickets",
  "shipping rates",
  "product reviews",
  "bank transactions",
  "job postings",
  "news headlines",
  "crypto balances",
  "hotel offers",
  "translation memories",
  "sales leads",
];
const SOURCES = [
  "from a REST API",
  "in a SQLite database",
  "for a given city",
  "for a date range",
  "from an S3 bucket",
  "in a spreadsheet",
  "for a GitHub repository",
  "from an RSS feed",
  "for a customer id",
  "in a JSON document",
  "from a web page",
  "for a list of ids",
  "in a local folder",
  "from a message queue",
  "for a postal code",
];
const OUTPUTS = [
  "and return them as JSON",
  "sorted by date",
  "grouped by category",
  "as a markdown table",
  "page by page",
  "keeping only the top ten",
  "in metric units",
  "with retries on failure",
  "with totals per month",
  "deduplicated by id",
];

function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t += 0x6d2b79f5;
    let r = Math.imul(t ^ (t >>> 15), t | 1);
    r ^= r + Math.imul(r ^ (r >>> 7), r | 61);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

/** Skill `i` of a library: a distinct name and description (the index keeps them apart where the grammar repeats). */
function skillAt(i: number, prefix: string): { name: string; description: string } {
  const random = prng(i * 7919 + 17);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;
  const action = pick(ACTIONS);
  const object = pick(OBJECTS);
  const description = `${action} ${object} ${pick(SOURCES)} ${pick(OUTPUTS)} (variant ${i}).`;
  const name = `${prefix}${action.toLowerCase()}_${object.split(" ")[0]?.toLowerCase()}_${i}`.replace(/[^A-Za-z0-9_]/g, "_");
  return { name, description };
}

interface VectorSource {
  readonly embedder: MiniLmEmbedder;
  vectorOf(i: number): Float32Array;
}

/** The real MiniLM over POOL descriptions; every further vector a noisy mix of two of them (header comment). */
async function vectorSource(): Promise<VectorSource> {
  const embedder = new MiniLmEmbedder({ runtime: "native" });
  const texts = Array.from({ length: POOL }, (_, i) => documentText(skillAt(i, "")));
  // Kept between runs (the pool takes minutes on a loaded machine); keyed by the model and the texts.
  const key = createHash("sha256").update(embedder.modelId).update(JSON.stringify(texts)).digest("hex").slice(0, 16);
  const cacheFile = path.join(os.tmpdir(), `skill-engine-bench-scale-pool-${key}.bin`);
  const pool: Float32Array[] = [];
  if (existsSync(cacheFile)) {
    const bytes = readFileSync(cacheFile);
    const all = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    const dimensions = embedder.dimensions;
    for (let i = 0; i < texts.length; i++) pool.push(all.slice(i * dimensions, (i + 1) * dimensions));
  } else {
    for (let i = 0; i < texts.length; i += 64) pool.push(...(await embedder.embed(texts.slice(i, i + 64))));
    await writeFile(cacheFile, Buffer.concat(pool.map((v) => Buffer.from(v.buffer, v.byteOffset, v.byteLength))));
  }
  const dimensions = pool[0]?.length ?? 0;
  return {
    embedder,
    vectorOf(i: number): Float32Array {
      if (i < pool.length) return pool[i] as Float32Array;
      const random = prng(i * 104729 + 3);
      const a = pool[Math.floor(random() * pool.length)] as Float32Array;
      const b = pool[Math.floor(random() * pool.length)] as Float32Array;
      const weight = 0.5 + 0.5 * random();
      const vector = new Float32Array(dimensions);
      let norm = 0;
      for (let d = 0; d < dimensions; d++) {
        const noise = 0.02 * Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
        vector[d] = weight * (a[d] as number) + (1 - weight) * (b[d] as number) + noise;
        norm += (vector[d] as number) ** 2;
      }
      norm = Math.sqrt(norm);
      for (let d = 0; d < dimensions; d++) (vector[d] as number) /= norm;
      return vector;
    },
  };
}

/** Queries of the development set when present (`../shared/bench`), else sentences of the same grammar. */
function queries(): string[] {
  const file = path.resolve(repoRoot, "..", "shared", "bench", "queries.jsonl");
  if (existsSync(file)) {
    return readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => (JSON.parse(line) as { query: string }).query);
  }
  return Array.from({ length: 3 * QUERIES }, (_, i) => `please ${skillAt(1_000_000 + i, "").description.toLowerCase()}`);
}

// ---------------------------------------------------------------------------------------------
// The home, offline

async function prepareHome(home: string, size: number, vectors: VectorSource): Promise<void> {
  await mkdir(home, { recursive: true, mode: 0o700 });
  const file = path.join(home, REGISTRY_FILE);
  const registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
  const store = new CanonicalStore(home);
  await store.init();
  const db = openRegistryDatabase(file, { durable: false });
  const composition = new Composition(registry, store, db, { maxDepth: 4, composedSkillsPerAgent: 50 });
  const skills: RoutableSkill[] = [];
  // 32 skills at a time: each one's steps in order, their file syncs overlapping (one at a time
  // took most of an hour at 100,000 on a loaded machine).
  const storeOne = async (i: number): Promise<RoutableSkill> => {
    const { name, description } = skillAt(i, "");
    const code = `import json, sys\nprint(json.dumps({"n": ${i}}))\n`;
    await store.writeVersion(name, 1, code);
    await composition.record(name, 1, { kind: "plain", dependsOn: [] });
    const active = await store.prepareActive(name, code);
    const owner = i % 5 === 4 ? "agent-b" : LOCAL;
    const visibility = i % 10 === 0 ? "public" : "private";
    registry.commitVersion(
      {
        name,
        version: 1,
        description,
        parametersSchema: '{"type":"object"}',
        testPayload: "{}",
        contentHash: contentHash(code),
        origin: "register",
        createdAt: new Date(),
      },
      { owner, visibility },
    );
    await active.commit();
    return { name, description, status: "active", owner, visibility };
  };
  for (let start = 0; start < size; start += 32) {
    const chunk = Array.from({ length: Math.min(32, size - start) }, (_, j) => start + j);
    skills.push(...(await Promise.all(chunk.map(storeOne))));
    if ((start + 32) % 20_000 < 32) progress(`  ${size}: ${Math.min(size, start + 32)} skills stored`);
  }
  progress(`  ${size}: every skill stored; indexing for routing`);
  // The routing indexes: what SkillRouter.index writes for each skill, in batches (one skill at a
  // time took most of an hour at 100,000 on a loaded machine). init([]) records the embedder and the
  // index layout, so the service finds the indexes current and does not re-index at start.
  const cache = new SqliteEmbeddingStore(db);
  const modelId = vectors.embedder.modelId;
  const logger = pino({ level: "silent" });
  const keywords = new KeywordIndex(db, { logger });
  const index = new SqliteVecIndex(db, { logger });
  const router = new SkillRouter({ db, embedder: new CachedEmbedder(vectors.embedder, cache), vectors: index, keywords, logger });
  await router.init([]);
  for (let start = 0; start < size; start += 5_000) {
    const batch = skills.slice(start, start + 5_000);
    const entries = new Map<string, Float32Array>();
    // A registration embeds its raw description too (the near-duplicate screen, through the same
    // cache): without those entries every bench registration embedded its fifty neighbours' again.
    batch.forEach((skill, j) => {
      entries.set(textHash(documentText(skill)), vectors.vectorOf(start + j));
      entries.set(textHash(skill.description), vectors.vectorOf(start + j));
    });
    cache.put(modelId, entries);
    keywords.upsert(batch.map((skill) => ({ ...skill, evidence: [] })));
    await index.upsert(
      batch.map((skill, j) => ({
        id: skill.name,
        vector: vectors.vectorOf(start + j),
        payload: vectorPayloadOf(skill),
      })),
    );
  }
  db.close();
  registry.close();
}

// ---------------------------------------------------------------------------------------------
// In process

interface InProcess {
  routeApproximate: Latency;
  routeExact: Latency;
  vectorsApproximate: Latency;
  vectorsExact: Latency;
  keywords: Latency;
  queryEmbedding: Latency;
  recallAt5: number;
  recallAt50: number;
  sketchLoadMs: number;
}

async function inProcess(home: string, vectors: VectorSource, sample: readonly string[]): Promise<InProcess> {
  const db = openRegistryDatabase(path.join(home, REGISTRY_FILE), { durable: false });
  const logger = pino({ level: "silent" });
  const keywords = new KeywordIndex(db, { logger });
  const exact = new SqliteVecIndex(db, { logger, approximateFrom: Number.POSITIVE_INFINITY });
  const approximate = new SqliteVecIndex(db, { logger });
  // The ranking's cost, as the issue measured it: each query embedded once beforehand (the model's
  // own cost, one query at a time, is reported apart).
  const embedder: Embedder = new CachedEmbedder(vectors.embedder, new SqliteEmbeddingStore(db));
  const modelTimes: number[] = [];
  for (const query of sample) {
    const t = performance.now();
    await embedder.embed([query]);
    modelTimes.push(performance.now() - t);
  }
  await exact.ensure(embedder.dimensions);
  const loadStarted = performance.now();
  await approximate.ensure(embedder.dimensions);
  const sketchLoadMs = performance.now() - loadStarted;
  const routers = [approximate, exact].map((index) => new SkillRouter({ db, embedder, vectors: index, keywords, logger }));
  const route = (router: SkillRouter, query: string, mode: "fused" | "keywords" = "fused") =>
    router.route(query, { limit: ROUTE_LIMIT, mode, scope: SCOPE });
  const queryVectors = await embedder.embed(sample);
  const times = {
    routeApproximate: [] as number[],
    routeExact: [] as number[],
    vectorsApproximate: [] as number[],
    vectorsExact: [] as number[],
    keywords: [] as number[],
  };
  for (const query of sample.slice(0, 5)) for (const router of routers) await route(router, query); // warm-up
  let found5 = 0;
  let found50 = 0;
  for (const [q, query] of sample.entries()) {
    // Alternating, so both paths see the same load on this shared machine.
    for (const [which, router] of [
      ["routeApproximate", routers[0]],
      ["routeExact", routers[1]],
    ] as const) {
      const t = performance.now();
      await route(router as SkillRouter, query);
      times[which].push(performance.now() - t);
    }
    const t = performance.now();
    await route(routers[0] as SkillRouter, query, "keywords");
    times.keywords.push(performance.now() - t);
    const vector = queryVectors[q] as Float32Array;
    let t0 = performance.now();
    const approx = await approximate.search(vector, { limit: 50, filter: FILTER });
    times.vectorsApproximate.push(performance.now() - t0);
    t0 = performance.now();
    const truth = await exact.search(vector, { limit: 50, filter: FILTER });
    times.vectorsExact.push(performance.now() - t0);
    const overlap = (n: number): number => {
      const want = new Set(truth.slice(0, n).map((hit) => hit.id));
      return approx.slice(0, n).filter((hit) => want.has(hit.id)).length / Math.max(1, want.size);
    };
    found5 += overlap(5);
    found50 += overlap(50);
  }
  db.close();
  return {
    routeApproximate: latency(times.routeApproximate),
    routeExact: latency(times.routeExact),
    vectorsApproximate: latency(times.vectorsApproximate),
    vectorsExact: latency(times.vectorsExact),
    keywords: latency(times.keywords),
    queryEmbedding: latency(modelTimes),
    recallAt5: found5 / sample.length,
    recallAt50: found50 / sample.length,
    sketchLoadMs,
  };
}

// ---------------------------------------------------------------------------------------------
// Through the service

type Registrations = Latency & { failed: number };

/**
 * REGISTRATIONS calls on `engine`, each paired with one on `empty` (a service on an empty library
 * running beside it), alternating: the machine's load drifts over a run of many minutes, and the
 * ratio the issue asks for compares calls made under the same load.
 */
async function registrations(
  engine: TestEngine,
  empty: TestEngine,
  prefix: string,
): Promise<{ library: Registrations; empty: Registrations }> {
  const samples: number[][] = [[], []];
  const failed = [0, 0];
  for (let i = 0; i < REGISTRATIONS; i++) {
    // Which of the two goes first alternates too: each call's after-reply work overlaps the next call.
    const order = i % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of order) {
      const target = side === 0 ? engine : empty;
      const { name, description } = skillAt(2_000_000 + i, `${prefix}${side === 0 ? "" : "e_"}`);
      const t = performance.now();
      try {
        await target.client.register(
          { name, description, code: SKILL_CODE, testPayload: '{"x": 1}', parametersSchema: '{"type":"object"}' },
          120_000,
        );
        samples[side]?.push(performance.now() - t);
      } catch (error) {
        // On a loaded machine a step's own deadline can pass (the syntax check's 2 s): counted, not timed.
        failed[side] = (failed[side] ?? 0) + 1;
        progress(`    registration ${name} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
  return {
    library: { ...latency(samples[0] ?? []), failed: failed[0] ?? 0 },
    empty: { ...latency(samples[1] ?? []), failed: failed[1] ?? 0 },
  };
}

async function timed(rounds: number, probe: () => Promise<unknown>): Promise<Latency> {
  for (let i = 0; i < 3; i++) await probe();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    await probe();
    samples.push(performance.now() - t);
  }
  return latency(samples);
}

async function consoleCookie(base: string): Promise<string> {
  const response = await fetch(`${base}/console/library`, { redirect: "manual" });
  const cookie = response.headers.get("set-cookie")?.split(";")[0];
  await response.text();
  if (!cookie) throw new Error("the console opened no session");
  return cookie;
}

async function listPage(engine: TestEngine, pageToken: string): Promise<{ count: number; next: string }> {
  const response = (await engine.client.call(engine.client.raw.listSkills, {
    includeInactive: false,
    owner: "",
    pageSize: PAGE_SIZE,
    pageToken,
  } as never)) as { skills: unknown[]; nextPageToken?: string };
  return { count: response.skills.length, next: response.nextPageToken ?? "" };
}

interface ServiceFigures {
  firstStartMs: number;
  startMs: number;
  rssMb: number;
  grpcRoute: Latency;
  listFirst: Latency;
  listMiddle: Latency;
  listFirstCount: number;
  consoleLibrary: Latency;
  register: { library: Registrations; empty: Registrations };
  rebuildIndexesMs: number;
  rebuildRegistryMs: number;
}

async function throughService(
  dirs: Awaited<ReturnType<typeof makeDirs>>,
  size: number,
  sample: readonly string[],
): Promise<ServiceFigures> {
  const env = { SKILL_ENGINE_CONSOLE: "on" };
  // The first start on an offline-built home may do one-time work (composition's backfill records a
  // declaration for each skill without one, reading its file): the restart after it is the figure.
  const t0 = performance.now();
  await (await startTestEngine({ dirs, env })).stop();
  const firstStartMs = performance.now() - t0;
  const t = performance.now();
  const engine = await startTestEngine({ dirs, env });
  const startMs = performance.now() - t;
  const rssMb = process.memoryUsage().rss / 2 ** 20;
  try {
    progress(`  ${size}: serving after ${(startMs / 1000).toFixed(1)} s`);
    let q = 0;
    const grpcRoute = await timed(sample.length, () =>
      engine.client.call(engine.client.raw.routeSkills, {
        query: sample[q++ % sample.length] as string,
        limit: ROUTE_LIMIT,
        format: ToolFormat.TOOL_FORMAT_UNSPECIFIED,
        mode: RouteMode.ROUTE_MODE_UNSPECIFIED,
      } as never),
    );
    const first = await listPage(engine, "");
    // The middle page's token, found by walking there once.
    let token = first.next;
    for (let page = 1; page < Math.floor(size / PAGE_SIZE / 2) && token !== ""; page++) token = (await listPage(engine, token)).next;
    const listFirst = await timed(20, () => listPage(engine, ""));
    const listMiddle = await timed(20, () => listPage(engine, token));
    const base = `http://127.0.0.1:${engine.app.metricsPort}`;
    const cookie = await consoleCookie(base);
    const consoleLibrary = await timed(20, async () => {
      const response = await fetch(`${base}/console/library`, { headers: { cookie } });
      if (response.status !== 200) throw new Error(`library page: HTTP ${response.status}`);
      await response.text();
    });
    progress(`  ${size}: ${REGISTRATIONS} registrations`);
    // An empty library's service beside this one: each registration here is paired with one there.
    const empty = await startTestEngine({ dirs: await makeDirs() });
    let register: { library: Registrations; empty: Registrations };
    try {
      register = await registrations(engine, empty, `r${size}_`);
    } finally {
      await empty.dispose();
    }
    const r = performance.now();
    await engine.client.call(engine.client.raw.rebuildIndexes, {} as never, 3_600_000);
    const rebuildIndexesMs = performance.now() - r;
    await engine.stop();
    const rr = performance.now();
    await rebuildRegistry({ home: dirs.home, policy: DEFAULT_HEALTH_POLICY, logger: pino({ level: "silent" }), force: true });
    const rebuildRegistryMs = performance.now() - rr;
    return {
      firstStartMs,
      startMs,
      rssMb,
      grpcRoute,
      listFirst,
      listMiddle,
      listFirstCount: first.count,
      consoleLibrary,
      register,
      rebuildIndexesMs,
      rebuildRegistryMs,
    };
  } finally {
    await engine.stop().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------

interface Latency {
  p50: number;
  p95: number;
}

function latency(values: readonly number[]): Latency {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { p50: round1(at(0.5)), p95: round1(at(0.95)) };
}

const round1 = (n: number): number => Math.round(n * 10) / 10;
const show = (l: Latency): string => `${l.p50} / ${l.p95}`;

async function main(): Promise<void> {
  progress(`embedding a pool of ${POOL} descriptions with MiniLM`);
  const vectors = await vectorSource();
  const allQueries = queries();
  const stride = Math.max(1, Math.floor(allQueries.length / QUERIES));
  const sample = allQueries.filter((_, i) => i % stride === 0).slice(0, QUERIES);

  // BENCH_SCALE_HOME_ONLY=<dir>: prepare one home of the first size there and stop (to profile a start on it).
  const homeOnly = process.env.BENCH_SCALE_HOME_ONLY;
  if (homeOnly !== undefined) {
    await mkdir(homeOnly, { recursive: true });
    await prepareHome(homeOnly, SIZES[0] as number, vectors);
    progress(`home of ${SIZES[0]} skills ready in ${homeOnly}`);
    await (vectors.embedder as { close?: () => Promise<void> }).close?.();
    return;
  }
  const rows: Array<{ size: number; seedS: number; inProcess: InProcess; service: ServiceFigures }> = [];
  const save = async (partial?: object): Promise<void> => {
    await mkdir(path.join(repoRoot, "bench", "results"), { recursive: true });
    await writeFile(
      path.join(repoRoot, "bench", "results", "scale-latest.json"),
      `${JSON.stringify({ at: new Date().toISOString(), pool: POOL, registrations: REGISTRATIONS, rows, partial }, null, 2)}\n`,
    );
  };

  for (const size of SIZES) {
    const dirs = await makeDirs();
    try {
      progress(`${size}: preparing the home`);
      const seeded = performance.now();
      await prepareHome(dirs.home, size, vectors);
      const seedS = (performance.now() - seeded) / 1000;
      progress(`${size}: home ready in ${seedS.toFixed(0)} s; routing in process`);
      const local = await inProcess(dirs.home, vectors, sample);
      await save({ size, seedS, inProcess: local });
      progress(`${size}: the service`);
      const service = await throughService(dirs, size, sample);
      rows.push({ size, seedS, inProcess: local, service });
      await save();
    } finally {
      const { rm } = await import("node:fs/promises");
      await rm(dirs.root, { recursive: true, force: true });
    }
  }
  await (vectors.embedder as { close?: () => Promise<void> }).close?.();

  const lines = [
    "",
    `ms p50 / p95 unless marked; ${sample.length} queries, route limit ${ROUTE_LIMIT}, pool of ${POOL} MiniLM vectors`,
    "",
    "| | " + rows.map((r) => r.size.toLocaleString("en-US")).join(" | ") + " |",
    "|---|" + rows.map(() => "---").join("|") + "|",
  ];
  const row = (label: string, value: (r: (typeof rows)[number]) => string): void => {
    lines.push(`| ${label} | ${rows.map(value).join(" | ")} |`);
  };
  row(
    "RegisterSkill: this library / an empty one, paired (ratio of p50s; failed)",
    (r) =>
      `${show(r.service.register.library)} / ${show(r.service.register.empty)} ` +
      `(${(r.service.register.library.p50 / r.service.register.empty.p50).toFixed(2)}x; ${r.service.register.library.failed + r.service.register.empty.failed})`,
  );
  row("RouteSkills in process, approximate vectors (default)", (r) => show(r.inProcess.routeApproximate));
  row("RouteSkills in process, exact vectors", (r) => show(r.inProcess.routeExact));
  row("keywords alone in process", (r) => show(r.inProcess.keywords));
  row("embedding a query (MiniLM, not in the rows above)", (r) => show(r.inProcess.queryEmbedding));
  row("vector search alone, approximate / exact (p50)", (r) => `${r.inProcess.vectorsApproximate.p50} / ${r.inProcess.vectorsExact.p50}`);
  row("recall of the approximate search @5 / @50", (r) => `${r.inProcess.recallAt5.toFixed(3)} / ${r.inProcess.recallAt50.toFixed(3)}`);
  row("RouteSkills through gRPC", (r) => show(r.service.grpcRoute));
  row(`ListSkills first page (${PAGE_SIZE})`, (r) => `${show(r.service.listFirst)} (${r.service.listFirstCount} skills)`);
  row("ListSkills middle page", (r) => show(r.service.listMiddle));
  row("console library page", (r) => show(r.service.consoleLibrary));
  row("start-up to serving after a restart (s)", (r) => (r.service.startMs / 1000).toFixed(1));
  row("first start on the offline-built home (s)", (r) => (r.service.firstStartMs / 1000).toFixed(1));
  row("of which the vector sketch (s, in process)", (r) => (r.inProcess.sketchLoadMs / 1000).toFixed(1));
  row("RebuildIndexes (s)", (r) => (r.service.rebuildIndexesMs / 1000).toFixed(1));
  row("rebuild-registry (s)", (r) => (r.service.rebuildRegistryMs / 1000).toFixed(1));
  row("RSS after start (MB, bench process)", (r) => r.service.rssMb.toFixed(0));
  row("home prepared offline (s)", (r) => r.seedS.toFixed(0));
  console.log(lines.join("\n"));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
