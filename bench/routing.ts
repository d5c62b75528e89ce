/**
 * npm run bench:routing [-- datasetDir ...]: routing quality and cost (docs/routing.md#measuring-it).
 *
 * Quality, through the real service, on each development set (default: `../shared/bench` and
 * `bench/data/taskbench`; any directory with `tools.jsonl` and `queries.jsonl`): starts it, registers
 * every tool as a skill through RegisterSkill (the real TDD gate in a container), routes every query
 * with RouteSkills and scores recall@1, recall@5, nDCG@5 and MRR, overall and per subset (a query's
 * `subset` field, else its id without a trailing number; a dataset without either gets one "ALL"
 * row), beside plain BM25 computed in the same run. Per set, two services one after another:
 *
 *   1. the default (MiniLM, normalised score fusion, clause splitting): keywords, vectors, fused;
 *      fusion weights by 5-fold cross-validation on the per-source scores; out of catalog by 5
 *      folds (each fifth of the tools deleted in turn, their queries routed: the share answered
 *      empty at the service's default floor, and the floor curve); fused after feedback (credit a
 *      TRAIN half, score the unseen TEST half); p50 route latency at the catalog's size and at 200;
 *   2. the default without clause splitting (the multi-intent figure's baseline).
 *
 * BENCH_ROUTING_FULL=1 adds the slow steps: RRF, the old default (USE-lite), example queries at
 * registration, the routing layer in process at 10,000 and 100,000 synthetic skills (a
 * deterministic stand-in embedder) and each real model's load, per-query cost and memory.
 *
 * Prints the tables and writes the figures to bench/results/routing-latest.json.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
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
import { toUnitVector } from "../src/embedding/index.js";
import {
  documentText,
  type Embedder,
  KeywordIndex,
  MiniLmEmbedder,
  normalizedScoreFusion,
  type RouteMode as RouterMode,
  SkillRouter,
  SqliteVecIndex,
  UseLiteEmbedder,
  vectorPayloadOf,
} from "../src/routing/index.js";
import { bm25Baseline } from "../test/support/bm25-baseline.js";
import { startTestEngine, type TestClient } from "../test/support/test-engine.js";
import { errorMessage } from "../src/errors/index.js";
import { loadConfig } from "../src/config/index.js";
import { migrateRegistry } from "../src/schema/index.js";

// ---------------------------------------------------------------------------------------------
// Settings

const repoRoot = fileURLToPath(new URL("..", import.meta.url));
const datasetDirs =
  process.argv.length > 2
    ? process.argv.slice(2).map((dir) => path.resolve(dir))
    : [path.resolve(repoRoot, "..", "shared", "bench"), path.resolve(repoRoot, "bench", "data", "taskbench")];
/** The slow steps (module comment); off by default so the bench stays within about ten minutes. */
const FULL = process.env.BENCH_ROUTING_FULL === "1";
/** The floor a request without min_relevance gets: the service's default (docs/routing.md#no-skill-fits). */
const DEFAULT_FLOOR = loadConfig({}).routing.minRelevance;
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
/** Source depth for the cross-validated fusion: what the service asks each source for (docs/routing.md#hybrid-ranking). */
const SOURCE_DEPTH = 50;
const CV_FOLDS = 5;
const WEIGHT_GRID = Array.from({ length: 21 }, (_, i) => i / 20);
/** Out of catalog: the tools fall into this many folds by a hash of the name; each fold is deleted in turn. */
const HELD_OUT_FOLDS = 5;
const RELEVANCE_THRESHOLDS = [0, 0.03, 0.05, 0.07, 0.085, 0.1, 0.12, 0.15, 0.2, 0.3];
/** The floor is chosen as the largest threshold that costs in-catalog recall@5 at most this much on every set. */
const MAX_RECALL_LOSS = 0.02;
const LATENCY_SKILLS = 200;
const MAX_EXAMPLES = 20;
/** Subsets of the dataset, found in main(); "ALL" is always the last group. */
let GROUPS: string[] = ["ALL"];
type Group = string;

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
  subset?: string;
}

function readJsonl<T>(datasetDir: string, file: string): T[] {
  const full = path.join(datasetDir, file);
  if (!existsSync(full)) throw new Error(`${full} not found; pass the dataset directory as the first argument`);
  return readFileSync(full, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as T);
}

/**
 * A query's subset: its `subset` field, else the id's leading all-lowercase words joined by "-"
 * ("restbench-tmdb-12" → "restbench-tmdb", "apibank-AddAlarm-level-1-1-s2" → "apibank"); an id
 * with no such prefix ("q17") has none.
 */
function subsetOf(query: Query): string | undefined {
  if (query.subset !== undefined && query.subset.trim() !== "") return query.subset.trim();
  const words: string[] = [];
  for (const word of query.id.split("-")) {
    if (!/^[a-z]+$/.test(word)) break;
    words.push(word);
  }
  return words.length > 0 && words.length < query.id.split("-").length ? words.join("-") : undefined;
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
    const subset = subsetOf(query);
    for (const group of subset === undefined || GROUPS.length === 1 ? ["ALL"] : [subset, "ALL"]) {
      const row = sums[group] as Scores;
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

/** Resident MB of this process's children (the native MiniLM runs in one), from /proc. */
function childrenRssMb(): number {
  let kb = 0;
  for (const task of readdirSync(`/proc/${process.pid}/task`)) {
    for (const pid of readFileSync(`/proc/${process.pid}/task/${task}/children`, "utf8").split(/\s+/).filter(Boolean)) {
      const status = readFileSync(`/proc/${pid}/status`, "utf8");
      kb += Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
  }
  return kb / 1024;
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

type ModeName = "keywords" | "vectors" | "fused" | "rrf";
const GRPC_MODES: Record<ModeName, RouteMode> = {
  keywords: RouteMode.ROUTE_MODE_KEYWORDS,
  vectors: RouteMode.ROUTE_MODE_VECTORS,
  fused: RouteMode.ROUTE_MODE_FUSED,
  rrf: RouteMode.ROUTE_MODE_RRF,
};

/**
 * Routes ask for min_relevance 0 (all hits, each with its relevance; thresholds are swept here)
 * unless `floor` is "default": no min_relevance, so the service's default floor applies.
 */
function route(client: TestClient, query: string, limit: number, mode: ModeName, floor: 0 | "default" = 0): Promise<RouteSkillsResponse> {
  return client.call<RouteSkillsRequest, RouteSkillsResponse>(client.raw.routeSkills, {
    query,
    limit,
    format: ToolFormat.TOOL_FORMAT_OPENAI,
    mode: GRPC_MODES[mode],
    ...(floor === "default" ? {} : { minRelevance: 0 }),
  });
}

async function registerAll(
  client: TestClient,
  tools: readonly Tool[],
  toSkill: ReadonlyMap<string, string>,
  examples: ReadonlyMap<string, string[]> = new Map(),
): Promise<number[]> {
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
              exampleQueries: examples.get(tool.name) ?? [],
            },
            180_000,
          )
          .catch((error: unknown) => {
            throw new Error(`registering ${tool.name} failed: ${errorMessage(error)}`);
          });
        if (!response.test?.success) throw new Error(`registering ${tool.name}: the TDD run did not succeed`);
        durations.push(performance.now() - started);
        done += 1;
        if (done % 50 === 0 || done === tools.length) progress(`registered ${done}/${tools.length} tools`);
      }
    }),
  );
  return durations;
}

/** One routed skill as the bench keeps it: the dataset's name, the raw source scores, the relevance. */
interface Hit {
  tool: string;
  keywordScore: number;
  vectorScore: number;
  relevance: number | undefined;
}

interface Routed {
  scored: Map<string, QueryScore>;
  latencies: number[];
  degraded: Set<string>;
  hits: Map<string, Hit[]>;
  /** Queries answered with no_fit. */
  noFit: Set<string>;
}

/** Routes every query once in `mode`, one at a time (so latencies are not queued behind each other). */
async function routeAll(
  client: TestClient,
  queries: readonly Query[],
  mode: ModeName,
  toTool: ReadonlyMap<string, string>,
  limit = ROUTE_LIMIT,
  floor: 0 | "default" = 0,
): Promise<Routed> {
  const scored = new Map<string, QueryScore>();
  const hits = new Map<string, Hit[]>();
  const latencies: number[] = [];
  const degraded = new Set<string>();
  const noFit = new Set<string>();
  for (const query of queries) {
    const started = performance.now();
    const response = await route(client, query.query, limit, mode, floor);
    latencies.push(performance.now() - started);
    for (const d of response.degraded) degraded.add(d);
    if (response.noFit) noFit.add(query.id);
    const list = response.skills.map((s) => ({
      tool: toTool.get(s.name) ?? s.name,
      keywordScore: s.keywordScore,
      vectorScore: s.vectorScore,
      relevance: s.hasRelevance ? s.relevance : undefined,
    }));
    hits.set(query.id, list);
    scored.set(
      query.id,
      scoreQuery(
        list.slice(0, ROUTE_LIMIT).map((h) => h.tool),
        query.relevant,
      ),
    );
  }
  return { scored, latencies, degraded, hits, noFit };
}

// ---------------------------------------------------------------------------------------------
// Cross-validated fusion weights, the out-of-catalog curve, multi-intent queries

function foldOf(id: string): number {
  return (createHash("sha256").update(id).digest()[0] as number) % CV_FOLDS;
}

/** The service's fusion (normalizedScoreFusion) over the per-source lists the bench fetched. */
function fuseAt(keywords: readonly Hit[], vectors: readonly Hit[], vectorWeight: number): string[] {
  return normalizedScoreFusion([
    { source: "keywords", weight: 1 - vectorWeight, items: keywords.map((h) => ({ id: h.tool, score: h.keywordScore })) },
    { source: "vectors", weight: vectorWeight, items: vectors.map((h) => ({ id: h.tool, score: h.vectorScore })) },
  ]).map((f) => f.id);
}

interface CrossValidation {
  weights: number[];
  chosen: number;
  recallAt1: number;
  recallAt5: number;
}

/**
 * k-fold cross-validation of the vector weight: for each fold, the weight that maximises
 * recall@1 + recall@5 on the other folds is scored on that fold; the figures are the pooled
 * held-out scores, and `chosen` (the weight picked on all folds together, the one a default
 * would take) is reported beside them. Clause splitting and the quality filter are left out: this
 * measures the fusion itself.
 */
function crossValidate(queries: readonly Query[], keywords: Routed, vectors: Routed): CrossValidation {
  const ranked = (query: Query, w: number): string[] => fuseAt(keywords.hits.get(query.id) ?? [], vectors.hits.get(query.id) ?? [], w);
  const gain = (subset: readonly Query[], w: number): number =>
    subset.reduce((sum, q) => {
      const score = scoreQuery(ranked(q, w).slice(0, ROUTE_LIMIT), q.relevant);
      return sum + score.recallAt1 + score.recallAt5;
    }, 0);
  const best = (subset: readonly Query[]): number =>
    WEIGHT_GRID.reduce((top, w) => (gain(subset, w) > gain(subset, top) ? w : top), WEIGHT_GRID[0] as number);
  const weights: number[] = [];
  let r1 = 0;
  let r5 = 0;
  for (let fold = 0; fold < CV_FOLDS; fold++) {
    const train = queries.filter((q) => foldOf(q.id) !== fold);
    const test = queries.filter((q) => foldOf(q.id) === fold);
    const w = best(train);
    weights.push(w);
    for (const q of test) {
      const score = scoreQuery(ranked(q, w).slice(0, ROUTE_LIMIT), q.relevant);
      r1 += score.recallAt1;
      r5 += score.recallAt5;
    }
  }
  return { weights, chosen: best(queries), recallAt1: r1 / queries.length, recallAt5: r5 / queries.length };
}

interface CurvePoint {
  threshold: number;
  outOfCatalogEmpty: number;
  inCatalogRecallAt5: number;
}

/** One out-of-catalog fold: its tools deleted, every query that needs only them or none of them routed. */
interface HeldOutFold {
  heldOut: number;
  outOfCatalog: Query[];
  inCatalog: Query[];
  /** Routed with min_relevance 0: every candidate with its relevance (the curve). */
  routed: Routed;
  /**
   * The out-of-catalog queries routed with no min_relevance: the service's default floor, through
   * RouteSkills. In-catalog queries are judged at that floor by the same rule from `routed`, which
   * halves the routes on a loaded machine.
   */
  atDefault: Routed;
  noFit: Set<string>;
}

/** The fold of a tool for the out-of-catalog protocol, by a hash of its dataset name. */
function heldOutFoldOf(name: string): number {
  return (createHash("sha256").update(`held-out:${name}`).digest()[0] as number) % HELD_OUT_FOLDS;
}

/**
 * The floor curve, pooled over the folds: at each min_relevance, the share of out-of-catalog queries
 * (every relevant tool held out) whose answer is empty, against the recall@5 of in-catalog queries
 * (no relevant tool held out). The floor judges the answer as the service does
 * (docs/routing.md#no-skill-fits): empty when no candidate reaches it, else the ranking unchanged.
 */
function outOfCatalogCurve(folds: readonly HeldOutFold[]): CurvePoint[] {
  const best = (fold: HeldOutFold, q: Query): number => Math.max(-1, ...(fold.routed.hits.get(q.id) ?? []).map((h) => h.relevance ?? 1));
  return RELEVANCE_THRESHOLDS.map((threshold) => {
    let empty = 0;
    let outOfCatalog = 0;
    let found = 0;
    let inCatalog = 0;
    for (const fold of folds) {
      outOfCatalog += fold.outOfCatalog.length;
      inCatalog += fold.inCatalog.length;
      empty += fold.outOfCatalog.filter((q) => best(fold, q) < threshold).length;
      found += fold.inCatalog.filter(
        (q) => best(fold, q) >= threshold && (fold.routed.hits.get(q.id) ?? []).slice(0, 5).some((h) => q.relevant.includes(h.tool)),
      ).length;
    }
    return {
      threshold,
      outOfCatalogEmpty: empty / Math.max(1, outOfCatalog),
      inCatalogRecallAt5: found / Math.max(1, inCatalog),
    };
  });
}

/** What the service's default floor did, pooled over the folds, measured through RouteSkills. */
interface AtDefault {
  outOfCatalog: number;
  inCatalog: number;
  outOfCatalogEmpty: number;
  /** Of the empty answers, the share that said no_fit (should be all of them). */
  noFitSaid: number;
  inCatalogRecallAt5: number;
  /** The same queries at min_relevance 0. */
  inCatalogRecallAt5AtZero: number;
  inCatalogEmpty: number;
}

function atDefault(folds: readonly HeldOutFold[]): AtDefault {
  let outOfCatalog = 0;
  let inCatalog = 0;
  let empty = 0;
  let said = 0;
  let found = 0;
  let foundAtZero = 0;
  let inCatalogEmpty = 0;
  for (const fold of folds) {
    outOfCatalog += fold.outOfCatalog.length;
    inCatalog += fold.inCatalog.length;
    for (const q of fold.outOfCatalog) {
      if ((fold.atDefault.hits.get(q.id) ?? []).length > 0) continue;
      empty += 1;
      if (fold.noFit.has(q.id)) said += 1;
    }
    for (const q of fold.inCatalog) {
      const hits = fold.routed.hits.get(q.id) ?? [];
      const fits = Math.max(-1, ...hits.map((h) => h.relevance ?? 1)) >= DEFAULT_FLOOR;
      const inTop5 = hits.slice(0, 5).some((h) => q.relevant.includes(h.tool));
      if (!fits) inCatalogEmpty += 1;
      if (fits && inTop5) found += 1;
      if (inTop5) foundAtZero += 1;
    }
  }
  return {
    outOfCatalog,
    inCatalog,
    outOfCatalogEmpty: empty / Math.max(1, outOfCatalog),
    noFitSaid: said / Math.max(1, empty),
    inCatalogRecallAt5: found / Math.max(1, inCatalog),
    inCatalogRecallAt5AtZero: foundAtZero / Math.max(1, inCatalog),
    inCatalogEmpty: inCatalogEmpty / Math.max(1, inCatalog),
  };
}

interface MultiIntent {
  queries: number;
  bothInTop5: number;
  allInTop5: number;
}

/** Multi-tool queries: the share with at least two relevant tools in the top 5, and with all of them. */
function multiIntent(queries: readonly Query[], routed: Routed): MultiIntent {
  const multi = queries.filter((q) => new Set(q.relevant).size > 1);
  let both = 0;
  let all = 0;
  for (const q of multi) {
    const top = new Set((routed.hits.get(q.id) ?? []).slice(0, 5).map((h) => h.tool));
    const relevant = [...new Set(q.relevant)];
    const found = relevant.filter((name) => top.has(name)).length;
    if (found >= 2) both += 1;
    if (found === relevant.length) all += 1;
  }
  return { queries: multi.length, bothInTop5: both / Math.max(1, multi.length), allInTop5: all / Math.max(1, multi.length) };
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
      migrateRegistry(db);
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
          payload: vectorPayloadOf(skill),
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
    const timings: Record<Exclude<RouterMode, "rrf">, number[]> = { fused: [], keywords: [], vectors: [] };
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

interface ModelCost {
  /** The model id, and the runtime when one model has two. */
  label: string;
  loadMs: number;
  perQuery: Latency;
  /** RSS growth from before the load to after the queries, this process and its children (the model runs in a worker thread or a child process). */
  rssGrowthMb: number;
}

/** A real model's cost, one query per call as RouteSkills embeds it. */
async function realEmbedderCost(
  embedder: Embedder & { close(): Promise<void> },
  queries: readonly string[],
  runtime?: string,
): Promise<ModelCost> {
  const rssBefore = rssMb() + childrenRssMb();
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
    const label = runtime === undefined ? embedder.modelId : `${embedder.modelId} (${runtime})`;
    return { label, loadMs, perQuery: latency(samples), rssGrowthMb: Math.round((rssMb() + childrenRssMb() - rssBefore) * 10) / 10 };
  } finally {
    await embedder.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Output

const f3 = (x: number): string => x.toFixed(3);
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;
const fms = (x: number): string => x.toFixed(1);

function qualityLines(title: string, table: Record<Group, Scores>): string[] {
  const lines = [title];
  lines.push(
    `  ${"subset".padEnd(18)} ${"n".padStart(4)} ${"recall@1".padStart(9)} ${"recall@5".padStart(9)} ${"nDCG@5".padStart(7)} ${"MRR".padStart(6)} ${"multi".padStart(6)} ${"all-rel@10".padStart(11)}`,
  );
  for (const group of GROUPS) {
    const row = table[group] as Scores;
    lines.push(
      `  ${group.padEnd(18)} ${String(row.n).padStart(4)} ${f3(row.recallAt1).padStart(9)} ${f3(row.recallAt5).padStart(9)} ` +
        `${f3(row.ndcgAt5).padStart(7)} ${f3(row.mrr).padStart(6)} ${String(row.multi).padStart(6)} ${f3(row.allRelAt10).padStart(11)}`,
    );
  }
  return lines;
}

// ---------------------------------------------------------------------------------------------
// Main

interface ServiceRun {
  label: string;
  registerLatency: Latency;
  registerSeconds: number;
  quality: Partial<Record<ModeName, Record<Group, Scores>>>;
  grpcLatency: Partial<Record<ModeName, Latency>>;
  routed: Partial<Record<ModeName, Routed>>;
  crossValidation?: CrossValidation;
}

/** Starts a service with `env`, registers the tools, routes every query in `modes`; `more` runs before it stops. */
async function serviceRun(
  label: string,
  env: Record<string, string>,
  data: { tools: Tool[]; queries: Query[]; toSkill: Map<string, string>; toTool: Map<string, string>; examples?: Map<string, string[]> },
  modes: readonly ModeName[],
  more?: (client: TestClient, run: ServiceRun) => Promise<void>,
): Promise<ServiceRun> {
  progress(`[${label}] starting the service`);
  const engine = await startTestEngine({
    env: { SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "4", SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4", ...env },
  });
  try {
    const client = engine.client;
    const started = performance.now();
    const registerLatency = latency(await registerAll(client, data.tools, data.toSkill, data.examples));
    const run: ServiceRun = {
      label,
      registerLatency,
      registerSeconds: Math.round((performance.now() - started) / 100) / 10,
      quality: {},
      grpcLatency: {},
      routed: {},
    };
    const listed = await client.list();
    if (listed.skills.length !== data.tools.length) throw new Error(`${listed.skills.length} skills listed, expected ${data.tools.length}`);
    for (const mode of modes) {
      // Single sources at the service's source depth: the top 10 score the mode, the whole lists feed cross-validation.
      const limit = mode === "keywords" || mode === "vectors" ? SOURCE_DEPTH : ROUTE_LIMIT;
      const t0 = performance.now();
      const routed = await routeAll(client, data.queries, mode, data.toTool, limit);
      run.routed[mode] = routed;
      run.quality[mode] = aggregate(data.queries, routed.scored);
      run.grpcLatency[mode] = latency(routed.latencies);
      const all = run.quality[mode].ALL as Scores;
      progress(
        `[${label}] routed ${data.queries.length} queries (${mode}) in ${((performance.now() - t0) / 1000).toFixed(1)} s: recall@1 ${f3(all.recallAt1)}, recall@5 ${f3(all.recallAt5)}`,
      );
    }
    if (run.routed.keywords && run.routed.vectors)
      run.crossValidation = crossValidate(data.queries, run.routed.keywords, run.routed.vectors);
    await more?.(client, run);
    return run;
  } finally {
    progress(`[${label}] stopping the service`);
    await engine.dispose();
  }
}

/** What one development set's run measured: its printed lines and the figures of the cross-set summary. */
interface DatasetResult {
  name: string;
  lines: string[];
  summary: {
    tools: number;
    queries: number;
    baseline: Scores;
    keywords: Scores;
    vectors: Scores;
    fused: Scores;
    crossValidation: CrossValidation | undefined;
    beforeFeedback: Scores;
    afterFeedback: Scores;
    testQueries: number;
    multiSplit: MultiIntent;
    multiUnsplit: MultiIntent;
    atDefault: AtDefault;
    latencyFused: Latency;
    latencyAt200: Latency | undefined;
  };
  results: Record<string, unknown>;
  words: string[];
  sampleQueries: string[];
}

async function benchDataset(datasetDir: string): Promise<DatasetResult> {
  const name = path.basename(datasetDir);
  const tools = readJsonl<Tool>(datasetDir, "tools.jsonl");
  const queries = readJsonl<Query>(datasetDir, "queries.jsonl");
  const { toSkill, toTool, renamed } = nameMapping(tools);
  const subsets = new Set<string>();
  for (const query of queries) {
    const subset = subsetOf(query);
    if (subset !== undefined) subsets.add(subset);
    for (const relevant of query.relevant)
      if (!toSkill.has(relevant)) throw new Error(`query ${query.id}: relevant tool ${relevant} is not in tools.jsonl`);
  }
  // Subsets only when every query has one; otherwise the table has the ALL row alone.
  GROUPS = subsets.size > 1 && queries.every((q) => subsetOf(q) !== undefined) ? [...[...subsets].sort(), "ALL"] : ["ALL"];
  const baseline = bm25BaselineScores(tools, queries);
  progress(
    `dataset ${datasetDir}: ${tools.length} tools (${renamed} renamed to valid skill names), ${queries.length} queries, subsets: ${GROUPS.join(", ")}`,
  );
  const data = { tools, queries, toSkill, toTool };
  const { train, test, mergedQueries } = feedbackSplit(queries);
  const sample = queries.filter((_, i) => i % Math.max(1, Math.floor(queries.length / SCALE_QUERIES)) === 0).slice(0, SCALE_QUERIES);

  // --- 1. The default ---------------------------------------------------------------------
  const folds: HeldOutFold[] = [];
  const feedback = { credits: 0, credited: 0, relevantNotReturned: 0, seconds: 0 };
  let beforeTest = {} as Record<Group, Scores>;
  let afterTest = {} as Record<Group, Scores>;
  let latencyAt200: Latency | undefined;
  const degraded = new Set<string>();
  const modes: ModeName[] = FULL ? ["keywords", "vectors", "fused", "rrf"] : ["keywords", "vectors", "fused"];
  const primary = await serviceRun(`${name}: MiniLM, default`, {}, data, modes, async (client, run) => {
    beforeTest = aggregate(test, (run.routed.fused as Routed).scored);
    // Out of catalog, 5 folds: delete a fifth of the tools, route the queries that need only them and
    // those that need none of them (at min_relevance 0 for the curve; the former also at the default
    // floor), bring them back.
    for (let fold = 0; fold < HELD_OUT_FOLDS; fold++) {
      const heldOut = new Set(tools.filter((t) => heldOutFoldOf(t.name) === fold).map((t) => t.name));
      const outOfCatalog = queries.filter((q) => q.relevant.every((n) => heldOut.has(n)));
      const inCatalog = queries.filter((q) => q.relevant.every((n) => !heldOut.has(n)));
      for (const held of heldOut) await client.call(client.raw.deleteSkill, { name: toSkill.get(held) as string, force: false });
      const routed = await routeAll(client, [...outOfCatalog, ...inCatalog], "fused", toTool);
      const atDefaultFloor = await routeAll(client, outOfCatalog, "fused", toTool, ROUTE_LIMIT, "default");
      folds.push({ heldOut: heldOut.size, outOfCatalog, inCatalog, routed, atDefault: atDefaultFloor, noFit: atDefaultFloor.noFit });
      for (const held of heldOut) await client.call(client.raw.restoreSkill, { name: toSkill.get(held) as string });
      progress(
        `[${run.label}] out of catalog, fold ${fold + 1}/${HELD_OUT_FOLDS}: ${heldOut.size} tools held out, ${outOfCatalog.length} out-of-catalog and ${inCatalog.length} in-catalog queries`,
      );
    }

    // Feedback: credit the TRAIN half, score the TEST half.
    const t0 = performance.now();
    for (const [i, query] of train.entries()) {
      const response = await route(client, query.query, TRAIN_ROUTE_LIMIT, "fused");
      const returned = new Set(response.skills.map((s) => s.name));
      for (const relevant of query.relevant) {
        const skill = toSkill.get(relevant) as string;
        if (!returned.has(skill)) {
          feedback.relevantNotReturned += 1;
          continue;
        }
        feedback.credits += 1;
        const answer = await client.call(client.raw.recordRouteFeedback, { routeId: response.routeId, name: skill, success: true });
        if (answer.credited) feedback.credited += 1;
      }
      if ((i + 1) % 100 === 0 || i + 1 === train.length)
        progress(`[${run.label}] feedback: ${i + 1}/${train.length} training queries routed and credited`);
    }
    feedback.seconds = Math.round((performance.now() - t0) / 100) / 10;
    const after = await routeAll(client, test, "fused", toTool);
    afterTest = aggregate(test, after.scored);
    for (const d of after.degraded) degraded.add(d);

    // Latency at 200 skills: filler skills from the dataset's vocabulary up to 200.
    const filler = fillerTools(tools, LATENCY_SKILLS - tools.length);
    if (filler.length > 0) {
      await registerAll(client, filler, new Map(filler.map((t) => [t.name, t.name])));
      latencyAt200 = latency((await routeAll(client, sample, "fused", toTool)).latencies);
    }
  });
  for (const routed of Object.values(primary.routed)) for (const d of routed.degraded) degraded.add(d);
  const curve = outOfCatalogCurve(folds);
  const measuredAtDefault = atDefault(folds);

  // --- 2. Without clause splitting; the slow extras -------------------------------------------
  const unsplit = await serviceRun(`${name}: MiniLM, no clause splitting`, { SKILL_ENGINE_ROUTE_SPLIT_CLAUSES: "off" }, data, ["fused"]);
  const useLite = FULL
    ? await serviceRun(`${name}: USE-lite, old default`, { SKILL_ENGINE_EMBEDDER: "use-lite" }, data, [
        "keywords",
        "vectors",
        "fused",
        "rrf",
      ])
    : undefined;
  let withExamples: ServiceRun | undefined;
  if (FULL) {
    const examples = new Map<string, string[]>();
    for (const query of train) {
      for (const relevant of new Set(query.relevant)) {
        const list = examples.get(relevant) ?? [];
        if (list.length < MAX_EXAMPLES) list.push(query.query.slice(0, 500));
        examples.set(relevant, list);
      }
    }
    withExamples = await serviceRun(`${name}: MiniLM, example queries`, {}, { tools, queries: test, toSkill, toTool, examples }, ["fused"]);
  }

  // --- Table ---------------------------------------------------------------------------------
  const multiSplit = multiIntent(queries, primary.routed.fused as Routed);
  const multiUnsplit = multiIntent(queries, unsplit.routed.fused as Routed);
  const lines: string[] = [];
  lines.push(
    `=== ${name}: ${tools.length} tools, ${queries.length} queries from ${path.relative(repoRoot, datasetDir) || datasetDir}; RouteSkills limit ${ROUTE_LIMIT} over gRPC, min_relevance 0 unless said`,
  );
  lines.push(
    `registration (default service): ${tools.length} skills through RegisterSkill (TDD in a container, concurrency ${REGISTER_CONCURRENCY}) in ${primary.registerSeconds.toFixed(1)} s; p50 ${fms(primary.registerLatency.p50)} ms, p95 ${fms(primary.registerLatency.p95)} ms`,
  );
  lines.push("");
  for (const mode of modes) {
    const table = primary.quality[mode];
    if (table) lines.push(...qualityLines(`[MiniLM (default), ${mode}] all queries`, table), "");
  }
  if (useLite)
    lines.push(...qualityLines(`[USE-lite (old default), fused] all queries`, useLite.quality.fused as Record<Group, Scores>), "");
  lines.push(...qualityLines("plain BM25 baseline, this run (k1=1.2, b=0.75; name split on _ and - plus description)", baseline), "");

  lines.push("summary, ALL queries                                   recall@1  recall@5  nDCG@5    MRR");
  const summary = (label: string, row: Pick<Scores, "recallAt1" | "recallAt5" | "ndcgAt5" | "mrr"> | undefined): void => {
    if (!row) return;
    lines.push(
      `  ${label.padEnd(52)} ${f3(row.recallAt1).padStart(8)} ${f3(row.recallAt5).padStart(9)} ${f3(row.ndcgAt5).padStart(7)} ${f3(row.mrr).padStart(6)}`,
    );
  };
  const cvLine = (label: string, cv: CrossValidation | undefined): void => {
    if (!cv) return;
    lines.push(
      `  ${label.padEnd(52)} ${f3(cv.recallAt1).padStart(8)} ${f3(cv.recallAt5).padStart(9)}       -      -   (fold weights ${cv.weights.join(", ")}; on all folds ${cv.chosen})`,
    );
  };
  summary("plain BM25 baseline", baseline.ALL);
  summary("keywords", primary.quality.keywords?.ALL);
  summary("vectors, MiniLM", primary.quality.vectors?.ALL);
  summary("vectors, USE-lite (old default encoder)", useLite?.quality.vectors?.ALL);
  summary("fused, MiniLM (default: score fusion + clauses)", primary.quality.fused?.ALL);
  summary("fused, MiniLM, no clause splitting", unsplit.quality.fused?.ALL);
  summary("RRF (k=60), MiniLM", primary.quality.rrf?.ALL);
  summary("fused, USE-lite (old encoder, new fusion)", useLite?.quality.fused?.ALL);
  summary("RRF, USE-lite (the old default)", useLite?.quality.rrf?.ALL);
  cvLine(`score fusion, ${CV_FOLDS}-fold CV, MiniLM (held-out folds)`, primary.crossValidation);
  cvLine(`score fusion, ${CV_FOLDS}-fold CV, USE-lite (held-out folds)`, useLite?.crossValidation);
  summary(`fused, test split (n=${test.length}), before feedback`, beforeTest.ALL);
  summary("fused, test split, after feedback on the train split", afterTest.ALL);
  summary("fused, test split, train queries as example queries", withExamples?.quality.fused?.ALL);
  lines.push(
    `  (feedback: ${train.length} train queries routed at limit ${TRAIN_ROUTE_LIMIT}, ${feedback.credited}/${feedback.credits} relevant tools credited, ` +
      `${feedback.relevantNotReturned} not returned, ${feedback.seconds.toFixed(1)} s; split by id hash with ${mergedQueries} queries in near-duplicate groups kept on one side)`,
  );
  lines.push("");
  lines.push(
    `multi-intent: ${multiSplit.queries} multi-tool queries            >= 2 relevant in top 5   all relevant in top 5`,
    `  fused, clause splitting (default)      ${f3(multiSplit.bothInTop5).padStart(24)} ${f3(multiSplit.allInTop5).padStart(23)}`,
    `  fused, no clause splitting             ${f3(multiUnsplit.bothInTop5).padStart(24)} ${f3(multiUnsplit.allInTop5).padStart(23)}`,
  );
  lines.push("");
  const d = measuredAtDefault;
  lines.push(
    `out of catalog, ${HELD_OUT_FOLDS} folds (each fifth of the tools deleted in turn): ${d.outOfCatalog} routes of queries that need only deleted tools, ${d.inCatalog} of queries that need none`,
    `  at the default floor (${DEFAULT_FLOOR}): out-of-catalog answered empty ${pct(d.outOfCatalogEmpty)} through RouteSkills (no_fit on ${pct(d.noFitSaid)} of them); ` +
      `in-catalog recall@5 ${f3(d.inCatalogRecallAt5)} (${f3(d.inCatalogRecallAt5AtZero)} at 0), in-catalog answered empty ${pct(d.inCatalogEmpty)}`,
    "  min_relevance   out-of-catalog answered empty   in-catalog recall@5",
  );
  for (const point of curve) {
    lines.push(
      `  ${point.threshold.toFixed(3).padStart(13)}   ${pct(point.outOfCatalogEmpty).padStart(29)}   ${f3(point.inCatalogRecallAt5).padStart(19)}${point.threshold === DEFAULT_FLOOR ? "   <- default" : ""}`,
    );
  }
  lines.push("");
  lines.push(`${"latency (ms)".padEnd(64)} ${"p50".padStart(7)} ${"p95".padStart(8)} ${"mean".padStart(8)}`);
  const lat = (label: string, l: Latency | undefined): void => {
    if (!l) return;
    lines.push(`  ${label.padEnd(62)} ${fms(l.p50).padStart(7)} ${fms(l.p95).padStart(8)} ${fms(l.mean).padStart(8)}`);
  };
  lat(`gRPC, ${tools.length} skills, keywords (limit ${SOURCE_DEPTH})`, primary.grpcLatency.keywords);
  lat(`gRPC, ${tools.length} skills, vectors (limit ${SOURCE_DEPTH}; new query: model embeds)`, primary.grpcLatency.vectors);
  lat(`gRPC, ${tools.length} skills, fused, MiniLM (query embedding cached)`, primary.grpcLatency.fused);
  lat(`gRPC, ${tools.length} skills, vectors, USE-lite (new query: model embeds)`, useLite?.grpcLatency.vectors);
  lat(`gRPC, ${LATENCY_SKILLS} skills, fused, MiniLM (query embedding cached)`, latencyAt200);
  if (degraded.size > 0) lines.push(`degraded answers seen: ${[...degraded].join("; ")}`);

  const strip = (run: ServiceRun | undefined) => (run ? { ...run, routed: undefined } : undefined);
  return {
    name,
    lines,
    summary: {
      tools: tools.length,
      queries: queries.length,
      baseline: baseline.ALL as Scores,
      keywords: primary.quality.keywords?.ALL as Scores,
      vectors: primary.quality.vectors?.ALL as Scores,
      fused: primary.quality.fused?.ALL as Scores,
      crossValidation: primary.crossValidation,
      beforeFeedback: beforeTest.ALL as Scores,
      afterFeedback: afterTest.ALL as Scores,
      testQueries: test.length,
      multiSplit,
      multiUnsplit,
      atDefault: measuredAtDefault,
      latencyFused: primary.grpcLatency.fused as Latency,
      latencyAt200,
    },
    results: {
      dataset: { dir: datasetDir, tools: tools.length, queries: queries.length, renamedTools: renamed, groups: GROUPS },
      baseline,
      runs: [strip(primary), strip(unsplit), strip(useLite), strip(withExamples)].filter((run) => run !== undefined),
      feedback: { ...feedback, train: train.length, test: test.length, beforeTest, afterTest },
      multiIntent: { split: multiSplit, unsplit: multiUnsplit },
      outOfCatalog: {
        folds: folds.map((f) => ({ heldOut: f.heldOut, outOfCatalog: f.outOfCatalog.length, inCatalog: f.inCatalog.length })),
        curve,
        atDefault: { floor: DEFAULT_FLOOR, ...measuredAtDefault },
      },
      latencyMs: { grpcAt200: latencyAt200 },
      degraded: [...degraded],
    },
    words: wordList(tools),
    sampleQueries: sample.map((q) => q.query),
  };
}

/** The figures issue 40 asks for, one column per development set. */
function crossSetSummary(sets: readonly DatasetResult[]): string[] {
  const width = 22;
  const lines = [
    `summary, both development sets (${HELD_OUT_FOLDS}-fold out of catalog; default floor ${DEFAULT_FLOOR})`,
    `  ${"".padEnd(50)} ${sets.map((s) => `${s.name} (${s.summary.tools} tools, ${s.summary.queries} q)`.padStart(width + 8)).join(" ")}`,
    `  ${"".padEnd(50)} ${sets.map(() => `R@1    R@5`.padStart(width + 8)).join(" ")}`,
  ];
  const row = (label: string, pick: (s: DatasetResult["summary"]) => string): void => {
    lines.push(`  ${label.padEnd(50)} ${sets.map((s) => pick(s.summary).padStart(width + 8)).join(" ")}`);
  };
  const both = (x: Pick<Scores, "recallAt1" | "recallAt5"> | undefined): string => (x ? `${f3(x.recallAt1)}  ${f3(x.recallAt5)}` : "-");
  row("plain BM25 (same run)", (s) => both(s.baseline));
  row("keywords", (s) => both(s.keywords));
  row("vectors (MiniLM)", (s) => both(s.vectors));
  row("fused (default)", (s) => both(s.fused));
  row(`fused, ${CV_FOLDS}-fold CV of the vector weight (held out)`, (s) => both(s.crossValidation));
  row("test half, before feedback", (s) => both(s.beforeFeedback));
  row("test half, after feedback on the train half", (s) => both(s.afterFeedback));
  row("multi-intent: all relevant in top 5 (split / not)", (s) => `${f3(s.multiSplit.allInTop5)} / ${f3(s.multiUnsplit.allInTop5)}`);
  row("multi-intent: >= 2 relevant in top 5 (split / not)", (s) => `${f3(s.multiSplit.bothInTop5)} / ${f3(s.multiUnsplit.bothInTop5)}`);
  row(`out of catalog answered empty at ${DEFAULT_FLOOR}`, (s) => pct(s.atDefault.outOfCatalogEmpty));
  row(
    `in-catalog recall@5 at ${DEFAULT_FLOOR} (at 0)`,
    (s) => `${f3(s.atDefault.inCatalogRecallAt5)} (${f3(s.atDefault.inCatalogRecallAt5AtZero)})`,
  );
  row(
    "p50 route latency, fused, ms (catalog / 200 skills)",
    (s) => `${fms(s.latencyFused.p50)} / ${s.latencyAt200 ? fms(s.latencyAt200.p50) : "-"}`,
  );
  return lines;
}

async function main(): Promise<void> {
  const sets: DatasetResult[] = [];
  for (const dir of datasetDirs) sets.push(await benchDataset(dir));

  // --- In process at scale, and each model's cost (BENCH_ROUTING_FULL=1) -------------------------
  const scales: ScaleResult[] = [];
  const models: ModelCost[] = [];
  const first = sets[0] as DatasetResult;
  if (FULL) {
    for (const size of SCALES) {
      progress(`in process: building ${size} synthetic skills (stand-in embedder, ${STAND_IN_DIMENSIONS} dims)`);
      scales.push(await benchScale(size, first.words, first.sampleQueries));
    }
    progress(`measuring each real model's load, per-query cost and memory (${first.sampleQueries.length} queries)`);
    models.push(
      await realEmbedderCost(new MiniLmEmbedder({ runtime: "native" }), first.sampleQueries, "native"),
      await realEmbedderCost(new MiniLmEmbedder({ runtime: "wasm" }), first.sampleQueries, "wasm"),
      await realEmbedderCost(new UseLiteEmbedder(), first.sampleQueries),
    );
  }

  const lines: string[] = [];
  for (const set of sets) lines.push(...set.lines, "");
  lines.push(...crossSetSummary(sets), "");
  if (FULL) {
    lines.push(
      `${"in process (BENCH_ROUTING_FULL=1), latency (ms)".padEnd(64)} ${"p50".padStart(7)} ${"p95".padStart(8)} ${"mean".padStart(8)}`,
    );
    const lat = (label: string, l: Latency): void => {
      lines.push(`  ${label.padEnd(62)} ${fms(l.p50).padStart(7)} ${fms(l.p95).padStart(8)} ${fms(l.mean).padStart(8)}`);
    };
    for (const s of scales) {
      lat(`in process, ${s.skills.toLocaleString("en-US")} skills, fused, as an agent (stand-in emb.)`, s.fused);
      lat(`in process, ${s.skills.toLocaleString("en-US")} skills, fused, as admin (baseline)`, s.fusedAdmin);
      lat(`in process, ${s.skills.toLocaleString("en-US")} skills, keywords`, s.keywords);
      lat(`in process, ${s.skills.toLocaleString("en-US")} skills, vectors (stand-in embedder)`, s.vectors);
    }
    for (const model of models) lat(`real model ${model.label}, embed 1 query`, model.perQuery);
    lines.push("");
    lines.push("index at scale   insert s (kw + vec)   db file MB   RSS growth MB: build / serve   RSS after serve MB");
    for (const s of scales) {
      lines.push(
        `  ${s.skills.toLocaleString("en-US").padEnd(12)} ${`${s.insertSeconds.toFixed(1)} (${s.insertKeywordsSeconds.toFixed(1)} + ${s.insertVectorsSeconds.toFixed(1)})`.padStart(20)} ` +
          `${s.dbFileMb.toFixed(1).padStart(12)}   ${`${(s.rssAfterBuildMb - s.rssBeforeMb).toFixed(1)} / ${s.rssServeGrowthMb.toFixed(1)}`.padStart(28)}   ${s.rssAfterServeMb.toFixed(1).padStart(18)}`,
      );
    }
    for (const model of models) {
      lines.push(
        `  real model ${model.label}: load + warm-up ${model.loadMs} ms, RSS growth ${model.rssGrowthMb} MB (this process and its children: the model runs in a worker thread or a child process)`,
      );
    }
  } else {
    lines.push("(BENCH_ROUTING_FULL=1 adds RRF, USE-lite, example queries, the in-process scale steps and each model's cost)");
  }
  const totalSeconds = Math.round((performance.now() - benchStarted) / 100) / 10;
  lines.push(`total benchmark time ${totalSeconds.toFixed(1)} s on ${os.cpus().length} CPUs`);

  console.log(`\n${lines.join("\n")}`);

  const out = path.join(repoRoot, "bench", "results");
  await mkdir(out, { recursive: true });
  const results = {
    at: new Date().toISOString(),
    host: { cpus: os.cpus().length, node: process.version },
    settings: {
      routeLimit: ROUTE_LIMIT,
      sourceDepth: SOURCE_DEPTH,
      folds: CV_FOLDS,
      heldOutFolds: HELD_OUT_FOLDS,
      defaultFloor: DEFAULT_FLOOR,
      maxRecallLoss: MAX_RECALL_LOSS,
      full: FULL,
    },
    sets: Object.fromEntries(sets.map((s) => [s.name, s.results])),
    latencyMs: { inProcess: scales },
    models,
    totalSeconds,
  };
  await writeFile(path.join(out, "routing-latest.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nwrote ${path.relative(process.cwd(), path.join(out, "routing-latest.json"))}`);
}

/** Filler skills for the latency figure: names and descriptions drawn from the dataset's words. */
function fillerTools(tools: readonly Tool[], count: number): Tool[] {
  const pick = zipfPicker(wordList(tools), 7);
  return Array.from({ length: Math.max(0, count) }, (_, i) => ({
    name: `filler_${Array.from({ length: 2 }, pick).join("_")}_${i}`.slice(0, 64),
    description: `${Array.from({ length: 16 }, pick).join(" ")}.`,
  }));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
