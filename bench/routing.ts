/**
 * npm run bench:routing [-- datasetDir]: routing quality and cost.
 *
 * Quality, through the real service: starts it (warm pool on), registers every tool of a
 * tool-retrieval dataset (`tools.jsonl`, `queries.jsonl`; default `../shared/bench`) as a skill —
 * each one through RegisterSkill, so each passes the real TDD gate in a container — then routes
 * every query with RouteSkills in three modes (keywords, vectors, fused) and scores recall@1,
 * recall@5, nDCG@5 and MRR, overall and per subset, beside plain BM25 computed in the same run.
 * "Fused after feedback" credits the relevant tools that a TRAIN half of the queries routed to
 * (RecordRouteFeedback) and scores fused routing on the unseen TEST half, before and after.
 *
 * Cost: RouteSkills latency through gRPC on the registered set, and — because registering 10k or
 * 100k skills through the TDD gate is not a benchmark anyone can wait for, and no path that skips
 * the gate may exist in the service — the routing layer in process (SkillRouter over KeywordIndex
 * and SqliteVecIndex in a temp SQLite file) at 10,000 and 100,000 synthetic skills, with a
 * deterministic stand-in embedder; the real model's per-query embedding cost is measured apart.
 *
 * Prints one table and writes the figures to bench/results/routing-latest.json.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import v8 from "node:v8";
import vm from "node:vm";
import Database from "better-sqlite3";
import pino from "pino";
import { RouteMode, type RouteSkillsRequest, type RouteSkillsResponse, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { toUnitVector } from "../src/routing/embedding/index.js";
import {
  documentText,
  type Embedder,
  KeywordIndex,
  type RouteMode as RouterMode,
  SkillRouter,
  SqliteVecIndex,
  UseLiteEmbedder,
} from "../src/routing/index.js";
import { bm25Baseline } from "../test/support/bm25-baseline.js";
import { startTestEngine, type TestClient, type TestEngine } from "../test/support/test-engine.js";
import { errorMessage } from "../src/errors/index.js";

// ---------------------------------------------------------------------------------------------
// Settings

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const datasetDir = process.argv[2] ? path.resolve(process.argv[2]) : path.resolve(repoRoot, "..", "shared", "bench");
const ROUTE_LIMIT = 10;
/**
 * Synthetic skills at scale belong to SYNTHETIC_OWNERS agents, one in PUBLIC_EVERY public. Routes
 * are measured as one of those agents ("own OR public": one search per source, filtered on the
 * audience, so sqlite-vec scores only the ~11% of rows that agent may see) and as an admin (one
 * unfiltered search per source: the baseline of scoping's cost).
 */
const SYNTHETIC_OWNERS = 100;
const PUBLIC_EVERY = 10;
const AGENT_SCOPE = { agentId: "agent-7", everything: false } as const;
const ADMIN_SCOPE = { agentId: "ops", everything: true } as const;
const TRAIN_ROUTE_LIMIT = 50;
const REGISTER_CONCURRENCY = 4;
const SCALES = [10_000, 100_000];
const SCALE_QUERIES = 100;
const INSERT_BATCH = 2_000;
const STAND_IN_DIMENSIONS = 512;
const SKILL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const SKILL_CODE = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";
const SUBSETS = ["apibank", "restbench-spotify", "restbench-tmdb"] as const;
const GROUPS = [...SUBSETS, "ALL"] as const;
type Group = (typeof GROUPS)[number];

const benchStarted = performance.now();
function progress(message: string): void {
  const seconds = ((performance.now() - benchStarted) / 1000).toFixed(1).padStart(6);
  console.log(`[${seconds}s] ${message}`);
}

// ---------------------------------------------------------------------------------------------
// Dataset

interface Tool {
  name: string;
  description: string;
}
interface Query {
  id: string;
  query: string;
  relevant: string[];
}

function readJsonl<T>(file: string): T[] {
  const full = path.join(datasetDir, file);
  if (!existsSync(full)) throw new Error(`${full} not found; pass the dataset directory as the first argument`);
  return readFileSync(full, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/** The README's subsets, by query id prefix. */
function subsetOf(id: string): (typeof SUBSETS)[number] {
  for (const subset of SUBSETS) if (id.startsWith(`${subset}-`)) return subset;
  throw new Error(`query id ${id} belongs to no known subset (${SUBSETS.join(", ")})`);
}

/**
 * Dataset names → skill names. A name the service would refuse (e.g. one starting with a digit)
 * becomes `t_<sanitized>` with a short hash when needed to stay unique; the mapping is reversed
 * on every routed name, so scores are computed on the dataset's own names.
 */
function nameMapping(tools: readonly Tool[]): { toSkill: Map<string, string>; toTool: Map<string, string>; renamed: number } {
  const toSkill = new Map<string, string>();
  const toTool = new Map<string, string>();
  let renamed = 0;
  for (const { name } of tools) {
    let skill = name;
    if (!SKILL_NAME_PATTERN.test(skill)) {
      renamed += 1;
      const hash = createHash("sha256").update(name).digest("hex").slice(0, 8);
      skill = `t_${name.replace(/[^A-Za-z0-9_-]+/g, "_")}`.slice(0, 64);
      if (toTool.has(skill) || !SKILL_NAME_PATTERN.test(skill)) skill = `${skill.slice(0, 55)}_${hash}`;
    }
    if (toTool.has(skill)) throw new Error(`two tools map to the skill name ${skill}`);
    toSkill.set(name, skill);
    toTool.set(skill, name);
  }
  return { toSkill, toTool, renamed };
}

const NEAR_DUPLICATE_JACCARD = 0.6;

/**
 * The feedback split: ~50% of the queries to TRAIN by a hash of an id, so it is stable across
 * runs. Near-duplicate queries (word-set Jaccard ≥ 0.6; API-Bank's level-1 and level-2 files
 * replay many of the same dialogs) are kept on one side — grouped, and the group goes where the
 * hash of its first id says — so the test split measures queries feedback has not seen.
 */
function feedbackSplit(queries: readonly Query[]): { train: Query[]; test: Query[]; mergedQueries: number } {
  const words = queries.map((q) => new Set(q.query.toLowerCase().match(/[a-z0-9]+/g) ?? []));
  const parent = queries.map((_, i) => i);
  const root = (i: number): number => {
    while (parent[i] !== i) i = parent[i] = parent[parent[i] as number] as number;
    return i;
  };
  for (let i = 0; i < queries.length; i++) {
    const a = words[i] as Set<string>;
    for (let j = i + 1; j < queries.length; j++) {
      const b = words[j] as Set<string>;
      let shared = 0;
      for (const word of a) if (b.has(word)) shared += 1;
      const union = a.size + b.size - shared;
      if (union > 0 && shared / union >= NEAR_DUPLICATE_JACCARD) parent[root(j)] = root(i);
    }
  }
  const groupSize = new Map<number, number>();
  for (let i = 0; i < queries.length; i++) groupSize.set(root(i), (groupSize.get(root(i)) ?? 0) + 1);
  const train: Query[] = [];
  const test: Query[] = [];
  queries.forEach((query, i) => {
    const leader = queries[root(i)] as Query;
    ((createHash("sha256").update(leader.id).digest()[0] as number) < 128 ? train : test).push(query);
  });
  const mergedQueries = [...groupSize.values()].filter((n) => n > 1).reduce((a, b) => a + b, 0);
  return { train, test, mergedQueries };
}

/** Plain BM25 over the same tools and queries, computed in this run (test/support/bm25-baseline.ts). */
function bm25BaselineScores(tools: readonly Tool[], queries: readonly Query[]): Record<Group, Scores> {
  const bm25 = bm25Baseline(tools);
  const scored = new Map<string, QueryScore>();
  for (const query of queries) scored.set(query.id, scoreQuery(bm25.rank(query.query).slice(0, ROUTE_LIMIT), query.relevant));
  return aggregate(queries, scored);
}

// ---------------------------------------------------------------------------------------------
// Metrics

interface Scores {
  n: number;
  recallAt1: number;
  recallAt5: number;
  ndcgAt5: number;
  /** Of the first relevant tool within the routed list (limit 10), 0 when none was routed. */
  mrr: number;
  /** Multi-tool queries only: every relevant tool within the routed list (limit 10). */
  multi: number;
  allRelAt10: number;
}

interface QueryScore {
  recallAt1: number;
  recallAt5: number;
  ndcgAt5: number;
  mrr: number;
  multi: boolean;
  allRelAt10: number;
}

function scoreQuery(ranked: readonly string[], relevantList: readonly string[]): QueryScore {
  const relevant = new Set(relevantList);
  const first = ranked.findIndex((name) => relevant.has(name)) + 1;
  let dcg = 0;
  ranked.slice(0, 5).forEach((name, i) => {
    if (relevant.has(name)) dcg += 1 / Math.log2(i + 2);
  });
  let ideal = 0;
  for (let i = 0; i < Math.min(relevant.size, 5); i++) ideal += 1 / Math.log2(i + 2);
  const top10 = new Set(ranked.slice(0, 10));
  return {
    recallAt1: first === 1 ? 1 : 0,
    recallAt5: first >= 1 && first <= 5 ? 1 : 0,
    ndcgAt5: ideal > 0 ? dcg / ideal : 0,
    mrr: first >= 1 ? 1 / first : 0,
    multi: relevant.size > 1,
    allRelAt10: relevant.size > 1 && [...relevant].every((name) => top10.has(name)) ? 1 : 0,
  };
}

function aggregate(queries: readonly Query[], scored: ReadonlyMap<string, QueryScore>): Record<Group, Scores> {
  const sums = Object.fromEntries(
    GROUPS.map((g) => [g, { n: 0, recallAt1: 0, recallAt5: 0, ndcgAt5: 0, mrr: 0, multi: 0, allRelAt10: 0 }]),
  ) as Record<Group, Scores>;
  for (const query of queries) {
    const score = scored.get(query.id);
    if (!score) continue;
    for (const group of [subsetOf(query.id), "ALL"] as const) {
      const row = sums[group];
      row.n += 1;
      row.recallAt1 += score.recallAt1;
      row.recallAt5 += score.recallAt5;
      row.ndcgAt5 += score.ndcgAt5;
      row.mrr += score.mrr;
      row.multi += score.multi ? 1 : 0;
      row.allRelAt10 += score.allRelAt10;
    }
  }
  for (const row of Object.values(sums)) {
    const n = Math.max(1, row.n);
    row.recallAt1 /= n;
    row.recallAt5 /= n;
    row.ndcgAt5 /= n;
    row.mrr /= n;
    row.allRelAt10 /= Math.max(1, row.multi);
  }
  return sums;
}

interface Latency {
  n: number;
  p50: number;
  p95: number;
  mean: number;
}

function latency(samples: readonly number[]): Latency {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  const round = (ms: number): number => Math.round(ms * 100) / 100;
  return {
    n: sorted.length,
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    mean: round(sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length)),
  };
}

/** A full GC before each RSS reading, so garbage from earlier phases does not blur the growth. */
v8.setFlagsFromString("--expose-gc");
const collectGarbage = vm.runInNewContext("gc") as () => void;

function rssMb(): number {
  collectGarbage();
  return Math.round((process.memoryUsage().rss / 1024 / 1024) * 10) / 10;
}

async function fileMb(...files: string[]): Promise<number> {
  let bytes = 0;
  for (const file of files)
    bytes += await stat(file).then(
      (s) => s.size,
      () => 0,
    );
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

// ---------------------------------------------------------------------------------------------
// Part 1 and 2: quality through the real service

type ModeName = "keywords" | "vectors" | "fused";
const GRPC_MODES: Record<ModeName, RouteMode> = {
  keywords: RouteMode.ROUTE_MODE_KEYWORDS,
  vectors: RouteMode.ROUTE_MODE_VECTORS,
  fused: RouteMode.ROUTE_MODE_FUSED,
};

function route(client: TestClient, query: string, limit: number, mode: ModeName): Promise<RouteSkillsResponse> {
  return client.call<RouteSkillsRequest, RouteSkillsResponse>(client.raw.routeSkills, {
    query,
    limit,
    format: ToolFormat.TOOL_FORMAT_OPENAI,
    mode: GRPC_MODES[mode],
  });
}

async function registerAll(client: TestClient, tools: readonly Tool[], toSkill: ReadonlyMap<string, string>): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  let done = 0;
  await Promise.all(
    Array.from({ length: REGISTER_CONCURRENCY }, async () => {
      while (next < tools.length) {
        const tool = tools[next++] as Tool;
        const started = performance.now();
        const response = await client
          .register(
            {
              name: toSkill.get(tool.name) as string,
              description: tool.description,
              code: SKILL_CODE,
              parametersSchema: '{"type":"object"}',
              testPayload: "{}",
              exampleQueries: [],
            },
            180_000,
          )
          .catch((error: unknown) => {
            throw new Error(`registering ${tool.name} failed: ${errorMessage(error)}`);
          });
        if (!response.test?.success) throw new Error(`registering ${tool.name}: the TDD run did not succeed`);
        durations.push(performance.now() - started);
        done += 1;
        if (done % 25 === 0 || done === tools.length) progress(`registered ${done}/${tools.length} tools`);
      }
    }),
  );
  return durations;
}

/** Routes every query once in `mode`, one at a time (so latencies are not queued behind each other). */
async function routeAll(
  client: TestClient,
  queries: readonly Query[],
  mode: ModeName,
  toTool: ReadonlyMap<string, string>,
): Promise<{ scored: Map<string, QueryScore>; latencies: number[]; degraded: Set<string>; rankings: Record<string, string[]> }> {
  const scored = new Map<string, QueryScore>();
  const rankings: Record<string, string[]> = {};
  const latencies: number[] = [];
  const degraded = new Set<string>();
  for (const query of queries) {
    const started = performance.now();
    const response = await route(client, query.query, ROUTE_LIMIT, mode);
    latencies.push(performance.now() - started);
    for (const d of response.degraded) degraded.add(d);
    const ranked = response.skills.map((s) => toTool.get(s.name) ?? s.name);
    scored.set(query.id, scoreQuery(ranked, query.relevant));
    rankings[query.id] = ranked;
  }
  return { scored, latencies, degraded, rankings };
}

// ---------------------------------------------------------------------------------------------
// Part 3: the routing layer in process at 10k and 100k synthetic skills

/** mulberry32: a small, fast, seeded PRNG (deterministic synthetic data). */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Stand-in for the sentence encoder at scale: a pseudo-random unit vector seeded by the text's
 * hash, so the same text always gets the same vector. It costs microseconds instead of the real
 * model's milliseconds (measured separately); the index sees vectors of the same size and kind.
 */
class HashEmbedder implements Embedder {
  readonly modelId = "bench-hash-stand-in";
  readonly dimensions = STAND_IN_DIMENSIONS;

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => this.vector(text));
  }

  vector(text: string): Float32Array {
    const random = prng(createHash("sha256").update(text).digest().readUInt32LE(0));
    const values = new Float32Array(this.dimensions);
    for (let i = 0; i < this.dimensions; i += 2) {
      // Box-Muller: Gaussian components make the direction uniform on the sphere.
      const r = Math.sqrt(-2 * Math.log(1 - random()));
      const theta = 2 * Math.PI * random();
      values[i] = r * Math.cos(theta);
      if (i + 1 < this.dimensions) values[i + 1] = r * Math.sin(theta);
    }
    return toUnitVector(values) as Float32Array;
  }
}

/**
 * The word list synthetic skills draw from: the dataset's own description words (most frequent
 * first, so queries share real vocabulary with the index), then deterministic pseudo-words for a
 * long tail. Words are drawn with a Zipf-like law, as in real text.
 */
function wordList(tools: readonly Tool[]): string[] {
  const counts = new Map<string, number>();
  for (const tool of tools) {
    for (const [word] of tool.description.toLowerCase().matchAll(/[a-z]{2,}/g)) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  const real = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([w]) => w);
  const random = prng(42);
  const syllables = ["ka", "lo", "mi", "ser", "ta", "ven", "dor", "qui", "bal", "nex", "ro", "sil", "tra", "pen", "gu", "zo", "fer", "lan"];
  const pseudo = new Set<string>();
  while (pseudo.size < 20_000) {
    const n = 2 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < n; i++) word += syllables[Math.floor(random() * syllables.length)];
    if (!counts.has(word)) pseudo.add(word);
  }
  return [...real, ...pseudo];
}

function zipfPicker(words: readonly string[], seed: number): () => string {
  const random = prng(seed);
  // Inverse CDF of a continuous 1/x law over [1, n+1): index ≈ (n+1)^u − 1.
  const n = words.length;
  return () => words[Math.min(n - 1, Math.floor(Math.pow(n + 1, random()) - 1))] as string;
}

interface ScaleResult {
  skills: number;
  insertSeconds: number;
  insertKeywordsSeconds: number;
  insertVectorsSeconds: number;
  dbFileMb: number;
  rssBeforeMb: number;
  rssAfterBuildMb: number;
  rssServeGrowthMb: number;
  rssAfterServeMb: number;
  fused: Latency;
  fusedAdmin: Latency;
  keywords: Latency;
  vectors: Latency;
}

async function benchScale(size: number, words: readonly string[], queries: readonly string[]): Promise<ScaleResult> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `bench-routing-${size}-`));
  const file = path.join(dir, "registry.db");
  const logger = pino({ level: "silent" });
  const embedder = new HashEmbedder();
  const pick = zipfPicker(words, size);
  const random = prng(size + 1);
  try {
    const rssBeforeMb = rssMb();
    let insertKeywordsSeconds = 0;
    let insertVectorsSeconds = 0;
    // Build: one connection, the indexes' batch APIs (what SkillRouter.index does per skill).
    {
      const db = new Database(file);
      db.pragma("journal_mode = WAL");
      const keywords = new KeywordIndex(db, { logger });
      const vectors = new SqliteVecIndex(db, { logger });
      await vectors.ensure(embedder.dimensions);
      let keywordMs = 0;
      let vectorMs = 0;
      for (let start = 0; start < size; start += INSERT_BATCH) {
        const batch = [];
        for (let i = start; i < Math.min(size, start + INSERT_BATCH); i++) {
          const nameWords = 2 + Math.floor(random() * 3);
          const name = `${Array.from({ length: nameWords }, pick).join("_")}_${i}`.slice(0, 64);
          const length = 8 + Math.floor(random() * 30);
          const description = `${Array.from({ length }, pick).join(" ")}.`;
          const visibility = i % PUBLIC_EVERY === 0 ? ("public" as const) : ("private" as const);
          batch.push({ name, description, owner: `agent-${i % SYNTHETIC_OWNERS}`, visibility, status: "active" });
        }
        const t0 = performance.now();
        keywords.upsert(batch.map((skill) => ({ ...skill, evidence: [] })));
        const t1 = performance.now();
        const entries = batch.map((skill) => ({
          id: skill.name,
          vector: embedder.vector(documentText(skill)),
          payload: {
            type: "acquired_skill" as const,
            name: skill.name,
            owner: skill.owner,
            visibility: skill.visibility,
            status: skill.status,
          },
        }));
        const t2 = performance.now();
        await vectors.upsert(entries);
        const t3 = performance.now();
        keywordMs += t1 - t0;
        vectorMs += t3 - t2;
        const inserted = Math.min(size, start + INSERT_BATCH);
        if (inserted % (size >= 50_000 ? 20_000 : 5_000) === 0 || inserted === size)
          progress(`  ${size}: inserted ${inserted} synthetic skills`);
      }
      db.pragma("wal_checkpoint(TRUNCATE)");
      await vectors.close();
      db.close();
      insertKeywordsSeconds = keywordMs / 1000;
      insertVectorsSeconds = vectorMs / 1000;
    }
    const rssAfterBuildMb = rssMb();
    const dbFileMb = await fileMb(file, `${file}-wal`);

    // Serve: a fresh connection, as a restarted service would hold it.
    const rssBeforeServe = rssMb();
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    const keywords = new KeywordIndex(db, { logger });
    const vectors = new SqliteVecIndex(db, { logger });
    const router = new SkillRouter({ db, embedder, vectors, keywords, logger });
    const timings: Record<RouterMode, number[]> = { fused: [], keywords: [], vectors: [] };
    for (const mode of ["fused", "keywords", "vectors"] as const) {
      for (const query of queries.slice(0, 5)) await router.route(query, { limit: ROUTE_LIMIT, mode, scope: AGENT_SCOPE }); // warm-up
      for (const query of queries) {
        const started = performance.now();
        const result = await router.route(query, { limit: ROUTE_LIMIT, mode, scope: AGENT_SCOPE });
        timings[mode].push(performance.now() - started);
        if (result.hits.length === 0 && mode !== "keywords") throw new Error(`no hits at ${size} skills for "${query}"`);
      }
      progress(`  ${size}: routed ${queries.length} queries (${mode}), p50 ${latency(timings[mode]).p50.toFixed(1)} ms`);
    }
    const adminTimings: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      await router.route(query, { limit: ROUTE_LIMIT, mode: "fused", scope: ADMIN_SCOPE });
      adminTimings.push(performance.now() - started);
    }
    progress(`  ${size}: routed ${queries.length} queries (fused, admin), p50 ${latency(adminTimings).p50.toFixed(1)} ms`);
    const rssAfterServeMb = rssMb();
    const rssServeGrowthMb = Math.round((rssAfterServeMb - rssBeforeServe) * 10) / 10;
    await vectors.close();
    db.close();
    return {
      skills: size,
      insertSeconds: Math.round((insertKeywordsSeconds + insertVectorsSeconds) * 10) / 10,
      insertKeywordsSeconds: Math.round(insertKeywordsSeconds * 10) / 10,
      insertVectorsSeconds: Math.round(insertVectorsSeconds * 10) / 10,
      dbFileMb,
      rssBeforeMb,
      rssAfterBuildMb,
      rssServeGrowthMb,
      rssAfterServeMb,
      fused: latency(timings.fused),
      fusedAdmin: latency(adminTimings),
      keywords: latency(timings.keywords),
      vectors: latency(timings.vectors),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The real model's cost per query, one query per call as RouteSkills embeds it. */
async function realEmbedderCost(
  queries: readonly string[],
): Promise<{ modelId: string; loadMs: number; perQuery: Latency; rssGrowthMb: number }> {
  const rssBefore = rssMb();
  const embedder = new UseLiteEmbedder();
  try {
    const t0 = performance.now();
    await embedder.embed(["load and warm up"]);
    const loadMs = Math.round(performance.now() - t0);
    const samples: number[] = [];
    for (const query of queries) {
      const started = performance.now();
      await embedder.embed([query]);
      samples.push(performance.now() - started);
    }
    return { modelId: embedder.modelId, loadMs, perQuery: latency(samples), rssGrowthMb: Math.round((rssMb() - rssBefore) * 10) / 10 };
  } finally {
    await embedder.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Output

const f3 = (x: number): string => x.toFixed(3);
const fms = (x: number): string => x.toFixed(1);

function qualityLines(title: string, table: Record<Group, Scores>): string[] {
  const lines = [title];
  lines.push(
    `  ${"subset".padEnd(18)} ${"n".padStart(4)} ${"recall@1".padStart(9)} ${"recall@5".padStart(9)} ${"nDCG@5".padStart(7)} ${"MRR".padStart(6)} ${"multi".padStart(6)} ${"all-rel@10".padStart(11)}`,
  );
  for (const group of GROUPS) {
    const row = table[group];
    lines.push(
      `  ${group.padEnd(18)} ${String(row.n).padStart(4)} ${f3(row.recallAt1).padStart(9)} ${f3(row.recallAt5).padStart(9)} ` +
        `${f3(row.ndcgAt5).padStart(7)} ${f3(row.mrr).padStart(6)} ${String(row.multi).padStart(6)} ${f3(row.allRelAt10).padStart(11)}`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const tools = readJsonl<Tool>("tools.jsonl");
  const queries = readJsonl<Query>("queries.jsonl");
  const { toSkill, toTool, renamed } = nameMapping(tools);
  for (const query of queries) {
    subsetOf(query.id);
    for (const name of query.relevant)
      if (!toSkill.has(name)) throw new Error(`query ${query.id}: relevant tool ${name} is not in tools.jsonl`);
  }
  const baseline = bm25BaselineScores(tools, queries);
  progress(`dataset ${datasetDir}: ${tools.length} tools (${renamed} renamed to valid skill names), ${queries.length} queries`);

  // --- Through the real service -------------------------------------------------------------
  let engine: TestEngine | undefined;
  const quality = {} as Record<ModeName, Record<Group, Scores>>;
  const grpcLatency = {} as Record<ModeName, Latency>;
  const degraded = new Set<string>();
  const rankings = {} as Record<ModeName | "fusedAfterFeedback", Record<string, string[]>>;
  let registerLatency: Latency;
  let registerSeconds: number;
  let feedback: {
    train: number;
    test: number;
    nearDuplicatesGrouped: number;
    credits: number;
    credited: number;
    relevantNotReturned: number;
    seconds: number;
  };
  let beforeTest: Record<Group, Scores>;
  let afterTest: Record<Group, Scores>;
  let afterLatency: Latency;
  try {
    progress("starting the service (warm pool of 4)");
    engine = await startTestEngine({
      env: { SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "4", SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4" },
    });
    const client = engine.client;

    const registerStarted = performance.now();
    registerLatency = latency(await registerAll(client, tools, toSkill));
    registerSeconds = Math.round((performance.now() - registerStarted) / 100) / 10;
    const listed = await client.list();
    if (listed.skills.length !== tools.length) throw new Error(`${listed.skills.length} skills listed, expected ${tools.length}`);

    // Fused before vectors: fused then pays the query embedding as a new query would (the
    // service caches embeddings by text), and vectors reuses it.
    const scoredByMode = {} as Record<ModeName, Map<string, QueryScore>>;
    for (const mode of ["keywords", "fused", "vectors"] as const) {
      const started = performance.now();
      const result = await routeAll(client, queries, mode, toTool);
      scoredByMode[mode] = result.scored;
      rankings[mode] = result.rankings;
      quality[mode] = aggregate(queries, result.scored);
      grpcLatency[mode] = latency(result.latencies);
      for (const d of result.degraded) degraded.add(d);
      progress(
        `routed ${queries.length} queries (${mode}) in ${((performance.now() - started) / 1000).toFixed(1)} s: ` +
          `recall@1 ${f3(quality[mode].ALL.recallAt1)}, recall@5 ${f3(quality[mode].ALL.recallAt5)}`,
      );
    }

    // --- Feedback: credit the TRAIN half, score the TEST half ---------------------------------
    const { train, test, mergedQueries } = feedbackSplit(queries);
    beforeTest = aggregate(test, scoredByMode.fused);
    const feedbackStarted = performance.now();
    let credits = 0;
    let credited = 0;
    let relevantNotReturned = 0;
    for (const [i, query] of train.entries()) {
      const response = await route(client, query.query, TRAIN_ROUTE_LIMIT, "fused");
      const returned = new Set(response.skills.map((s) => s.name));
      for (const name of query.relevant) {
        const skill = toSkill.get(name) as string;
        if (!returned.has(skill)) {
          relevantNotReturned += 1;
          continue;
        }
        credits += 1;
        const answer = await client.call(client.raw.recordRouteFeedback, { routeId: response.routeId, name: skill, success: true });
        if (answer.credited) credited += 1;
      }
      if ((i + 1) % 50 === 0 || i + 1 === train.length) progress(`feedback: ${i + 1}/${train.length} training queries routed and credited`);
    }
    feedback = {
      train: train.length,
      test: test.length,
      nearDuplicatesGrouped: mergedQueries,
      credits,
      credited,
      relevantNotReturned,
      seconds: Math.round((performance.now() - feedbackStarted) / 100) / 10,
    };
    const after = await routeAll(client, test, "fused", toTool);
    afterTest = aggregate(test, after.scored);
    rankings.fusedAfterFeedback = after.rankings;
    afterLatency = latency(after.latencies);
    for (const d of after.degraded) degraded.add(d);
    progress(
      `fused after feedback on ${test.length} test queries: recall@1 ${f3(beforeTest.ALL.recallAt1)} → ${f3(afterTest.ALL.recallAt1)}`,
    );
  } finally {
    progress("stopping the service");
    await engine?.dispose();
  }

  // --- In process at scale -------------------------------------------------------------------
  const words = wordList(tools);
  const scaleQueries = queries
    .filter((_, i) => i % Math.max(1, Math.floor(queries.length / SCALE_QUERIES)) === 0)
    .slice(0, SCALE_QUERIES)
    .map((q) => q.query);
  const scales: ScaleResult[] = [];
  for (const size of SCALES) {
    progress(`in process: building ${size} synthetic skills (stand-in embedder, ${STAND_IN_DIMENSIONS} dims)`);
    scales.push(await benchScale(size, words, scaleQueries));
  }
  progress(`measuring the real model's per-query embedding cost (${scaleQueries.length} queries)`);
  const model = await realEmbedderCost(scaleQueries);

  // --- Table ---------------------------------------------------------------------------------
  const lines: string[] = [];
  lines.push(
    `routing benchmark: ${tools.length} tools, ${queries.length} queries from ${path.relative(repoRoot, datasetDir) || datasetDir}; RouteSkills limit ${ROUTE_LIMIT} over gRPC`,
  );
  lines.push(
    `registration: ${tools.length} skills through RegisterSkill (TDD in a container, concurrency ${REGISTER_CONCURRENCY}) in ${registerSeconds.toFixed(1)} s; p50 ${fms(registerLatency.p50)} ms, p95 ${fms(registerLatency.p95)} ms`,
  );
  lines.push("");
  for (const mode of ["keywords", "vectors", "fused"] as const) lines.push(...qualityLines(`[${mode}] all queries`, quality[mode]), "");
  lines.push(
    `[fused after feedback] ${feedback.train} train queries routed (limit ${TRAIN_ROUTE_LIMIT}) and their returned relevant tools credited ` +
      `(${feedback.credited}/${feedback.credits} credited; ${feedback.relevantNotReturned} relevant tools not returned), ${feedback.seconds.toFixed(1)} s;`,
    `  split by id hash, ${feedback.nearDuplicatesGrouped} queries in near-duplicate groups (word Jaccard >= ${NEAR_DUPLICATE_JACCARD}) kept on one side`,
  );
  lines.push(...qualityLines(`  fused BEFORE feedback, test split (${feedback.test} queries)`, beforeTest));
  lines.push(...qualityLines(`  fused AFTER feedback, test split (${feedback.test} queries)`, afterTest));
  lines.push("");
  lines.push(...qualityLines("plain BM25 baseline, this run (k1=1.2, b=0.75; name split on _ and - plus description)", baseline));
  lines.push("");
  lines.push("summary, ALL queries            recall@1  recall@5  nDCG@5    MRR");
  const summary = (label: string, row: Pick<Scores, "recallAt1" | "recallAt5" | "ndcgAt5" | "mrr"> | undefined, ndcg = true): void => {
    if (!row) return;
    lines.push(
      `  ${label.padEnd(30)} ${f3(row.recallAt1).padStart(8)} ${f3(row.recallAt5).padStart(9)} ${(ndcg ? f3(row.ndcgAt5) : "-").padStart(7)} ${f3(row.mrr).padStart(6)}`,
    );
  };
  summary("plain BM25 baseline", baseline.ALL);
  summary("keywords", quality.keywords.ALL);
  summary("vectors", quality.vectors.ALL);
  summary("fused", quality.fused.ALL);
  summary(`fused, test split (n=${feedback.test})`, beforeTest.ALL);
  summary("fused after feedback, test", afterTest.ALL);
  lines.push("");
  lines.push(`${"latency (ms)".padEnd(58)} ${"p50".padStart(7)} ${"p95".padStart(8)} ${"mean".padStart(8)}`);
  const lat = (label: string, l: Latency): void => {
    lines.push(`  ${label.padEnd(56)} ${fms(l.p50).padStart(7)} ${fms(l.p95).padStart(8)} ${fms(l.mean).padStart(8)}`);
  };
  lat(`gRPC, ${tools.length} skills, keywords`, grpcLatency.keywords);
  lat(`gRPC, ${tools.length} skills, fused (new query: real model embeds)`, grpcLatency.fused);
  lat(`gRPC, ${tools.length} skills, vectors (query embedding cached)`, grpcLatency.vectors);
  lat(`gRPC, ${tools.length} skills, fused after feedback (emb. cached)`, afterLatency);
  for (const s of scales) {
    lat(`in process, ${s.skills.toLocaleString("en-US")} skills, fused, as an agent (stand-in emb.)`, s.fused);
    lat(`in process, ${s.skills.toLocaleString("en-US")} skills, fused, as admin (baseline)`, s.fusedAdmin);
    lat(`in process, ${s.skills.toLocaleString("en-US")} skills, keywords`, s.keywords);
    lat(`in process, ${s.skills.toLocaleString("en-US")} skills, vectors (stand-in embedder)`, s.vectors);
  }
  lat(`real model ${model.modelId}, embed 1 query`, model.perQuery);
  for (const s of scales) {
    lines.push(
      `  ${`est. fused at ${s.skills.toLocaleString("en-US")} + real model (sum)`.padEnd(56)} ${fms(s.fused.p50 + model.perQuery.p50).padStart(7)} ${fms(s.fused.p95 + model.perQuery.p95).padStart(8)}`,
    );
  }
  lines.push("");
  lines.push("index at scale   insert s (kw + vec)   db file MB   RSS growth MB: build / serve   RSS after serve MB");
  for (const s of scales) {
    lines.push(
      `  ${s.skills.toLocaleString("en-US").padEnd(12)} ${`${s.insertSeconds.toFixed(1)} (${s.insertKeywordsSeconds.toFixed(1)} + ${s.insertVectorsSeconds.toFixed(1)})`.padStart(20)} ` +
        `${s.dbFileMb.toFixed(1).padStart(12)}   ${`${(s.rssAfterBuildMb - s.rssBeforeMb).toFixed(1)} / ${s.rssServeGrowthMb.toFixed(1)}`.padStart(28)}   ${s.rssAfterServeMb.toFixed(1).padStart(18)}`,
    );
  }
  lines.push("  (serve = a fresh connection routing 300 queries; SQLite reads the index through its 16 MB page cache");
  lines.push("   and the OS file cache, so the process RSS barely grows: the file size is the memory a hot index needs)");
  lines.push(`  real model: load + warm-up ${model.loadMs} ms, RSS growth ${model.rssGrowthMb} MB (the model runs in a worker thread)`);
  if (degraded.size > 0) lines.push(`degraded answers seen: ${[...degraded].join("; ")}`);
  const totalSeconds = Math.round((performance.now() - benchStarted) / 100) / 10;
  lines.push(`total benchmark time ${totalSeconds.toFixed(1)} s on ${os.cpus().length} CPUs`);

  console.log(`\n${lines.join("\n")}`);

  const out = path.join(repoRoot, "bench", "results");
  await mkdir(out, { recursive: true });
  const results = {
    at: new Date().toISOString(),
    dataset: { dir: datasetDir, tools: tools.length, queries: queries.length, renamedTools: renamed },
    host: { cpus: os.cpus().length, node: process.version },
    settings: {
      routeLimit: ROUTE_LIMIT,
      trainRouteLimit: TRAIN_ROUTE_LIMIT,
      registerConcurrency: REGISTER_CONCURRENCY,
      scaleQueries: scaleQueries.length,
    },
    registration: { seconds: registerSeconds, latencyMs: registerLatency },
    quality,
    feedback: { ...feedback, beforeTest, afterTest },
    baseline,
    latencyMs: {
      grpc: { skills: tools.length, ...grpcLatency, fusedAfterFeedback: afterLatency },
      inProcess: scales,
      realModelEmbedPerQuery: model.perQuery,
    },
    realModel: model,
    degraded: [...degraded],
    totalSeconds,
    /** Routed tool names (top 10) per query id, for diagnosis. */
    rankings,
  };
  await writeFile(path.join(out, "routing-latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), path.join(out, "routing-latest.json"))}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
