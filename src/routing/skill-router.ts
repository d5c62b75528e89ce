import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { Embedder } from "../embedding/index.js";
import {
  type KeywordIndex,
  MAX_SEARCH_LIMIT,
  nameWords,
  normalizedScoreFusion,
  type RankedList,
  reciprocalRankFusion,
  SKILL_PAYLOAD_TYPE,
  type SkillIndexPayload,
  type SkillVisibility,
  type VectorIndex,
  VectorIndexUnavailableError,
  type VectorSearchFilter,
} from "../search/index.js";
import { splitClauses } from "./query-clauses.js";
import { type RouteScope, scopeFilter } from "./route-scope.js";

export { ROUTABLE_STATUSES, type RouteScope, scopeFilter } from "./route-scope.js";
import { mergeClauses, mergePieces, type Ranking } from "./ranking-merge.js";
import { background, calibrationFor, type RelevanceCalibration, relevance } from "./relevance.js";
import { bestPerSkill, evidenceVectorId, RouteEvidence, scoreWithEvidence } from "./route-evidence.js";

/** The catalog routing indexes, counted without reading it; `load` reads every skill. */
export interface RoutableCatalog {
  readonly count: number;
  load(): readonly RoutableSkill[];
}

/** What routing needs to know of a skill. */
export interface RoutableSkill {
  readonly name: string;
  readonly description: string;
  readonly status: string;
  readonly owner: string;
  readonly visibility: SkillVisibility;
  /** The grantees' audiences (docs/routing.md#scoping). */
  readonly grantAudiences?: readonly string[];
}

/** What a skill's vectors (its own and its evidence's) carry for the filters inside the search (docs/routing.md#scoping). */
export function vectorPayloadOf(skill: RoutableSkill): SkillIndexPayload {
  return {
    type: SKILL_PAYLOAD_TYPE,
    name: skill.name,
    owner: skill.owner,
    visibility: skill.visibility,
    status: skill.status,
    ...(skill.grantAudiences && skill.grantAudiences.length > 0 ? { grantAudiences: skill.grantAudiences } : {}),
  };
}

/** fused: normalised score fusion (the default); rrf: reciprocal rank fusion; or one source alone. */
export type RouteMode = "fused" | "rrf" | "keywords" | "vectors";

export interface RouteHit {
  readonly name: string;
  readonly score: number;
  /**
   * Calibrated probability that the skill is one the query needs (docs/routing.md#relevance);
   * undefined when the route had no vector source (keywords mode, or vectors unavailable).
   */
  readonly relevance: number | undefined;
  /** 1-based; 0 when the source did not return it. */
  readonly keywordRank: number;
  readonly vectorRank: number;
  /** Raw BM25 and cosine similarity; 0 when that source did not return the skill. */
  readonly keywordScore: number;
  readonly vectorScore: number;
}

export interface RouteResult {
  readonly routeId: string;
  readonly hits: RouteHit[];
  /** Sources that could not answer, and what was used instead. */
  readonly degraded: string[];
  /** No candidate's relevance reached the floor, so `hits` is empty (docs/routing.md#no-skill-fits). */
  readonly noFit: boolean;
}

/** A skill's quality counters, from routed invocations (docs/routing.md#quality-filter). */
export interface RouteQuality {
  readonly selections: number;
  readonly completions: number;
  readonly failures: number;
}

export interface SkillRouterOptions {
  /** A handle on registry.db: routes, outcomes and evidence live beside the skills. */
  readonly db: Database.Database;
  readonly embedder: Embedder;
  readonly vectors: VectorIndex;
  readonly keywords: KeywordIndex;
  readonly logger: Logger;
  /** How long after a route an invocation still credits it. @default 10 minutes */
  readonly creditWindowMs?: number;
  /**
   * Weight of the vector source in fused mode; keywords get 1 − this (docs/routing.md#fusion).
   * @default {@link DEFAULT_VECTOR_WEIGHT}
   */
  readonly vectorWeight?: number;
  /** Rank each clause of a multi-intent query apart and merge (docs/routing.md#multi-intent-queries). @default true */
  readonly splitClauses?: boolean;
  /** @default the calibration fitted for the embedder's model ({@link calibrationFor}) */
  readonly calibration?: RelevanceCalibration;
}

/**
 * Weight of vectors in normalised score fusion, chosen by 5-fold cross-validation on the
 * development set with the default encoder (docs/routing.md#fusion).
 */
export const DEFAULT_VECTOR_WEIGHT = 0.7;
/**
 * Candidates asked of each source at least, whatever the limit: min-max normalisation spans the
 * list a source returned, so a fixed depth keeps the fused order independent of `limit`.
 */
const SOURCE_DEPTH = 50;

/**
 * When the skill's active version became active (`skills.activated_at`, bound to the skill's name):
 * the quality counters kept for it (docs/routing.md#quality-filter). 0 for a name the registry does not hold.
 */
export const ACTIVATED_AT = "COALESCE((SELECT activated_at FROM skills WHERE skills.name = ?), 0)";

/** routing_meta keys of skills whose indexing is still in flight (or was, when the process stopped). */
const PENDING_PREFIX = "pending-index:";
/** Hits asked of the vector index per skill name wanted by {@link SkillRouter.nearestSkills}. */
const NEAREST_OVERFETCH = 4;
const META_EMBEDDER = "embedder";
/**
 * Bumped when what the indexes hold changes meaning, so the next start re-indexes everything.
 * 2: owner and visibility are the registry's (before identity, every skill was indexed public).
 * 3: every index entry carries its audience (own OR public is one search); Qdrant points written
 *    before it lack the field and would match no agent's scope until re-upserted.
 * 4: a main vector embeds the name split as the keyword index splits it (acronym boundaries too).
 * 5: an entry has every audience of its grantees too (one sqlite-vec row per audience, an audience
 *    table beside the keyword index, an array in Qdrant); system skills are indexed public and
 *    disabled ones with status `disabled`.
 */
const INDEX_LAYOUT = 5;

/**
 * Routes a query to the few skills that matter: keywords (FTS5 bm25) and vectors (sentence
 * embeddings) ranked separately and fused by normalised score fusion (or reciprocal rank fusion),
 * each hit with a calibrated relevance. Learns from use (docs/routing.md#learning-from-use): a routed skill that then succeeds gets the query as evidence, both as
 * keyword text and as an extra vector of its own, so similar future queries find it even when its
 * description is poor.
 */
export class SkillRouter {
  private readonly db: Database.Database;
  private readonly embedder: Embedder;
  private readonly vectors: VectorIndex;
  private readonly keywords: KeywordIndex;
  private readonly logger: Logger;
  private readonly creditWindowMs: number;
  private readonly vectorWeight: number;
  private readonly splitClauses: boolean;
  private readonly calibration: RelevanceCalibration;
  private readonly evidence: RouteEvidence;

  constructor(options: SkillRouterOptions) {
    this.db = options.db;
    this.embedder = options.embedder;
    this.vectors = options.vectors;
    this.keywords = options.keywords;
    this.logger = options.logger;
    this.creditWindowMs = options.creditWindowMs ?? 10 * 60_000;
    this.vectorWeight = options.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
    if (!(this.vectorWeight >= 0 && this.vectorWeight <= 1))
      throw new RangeError(`vectorWeight must be in [0, 1], got ${this.vectorWeight}`);
    this.splitClauses = options.splitClauses ?? true;
    this.calibration = options.calibration ?? calibrationFor(options.embedder.modelId);
    this.evidence = new RouteEvidence(this.db, this.vectors);
  }

  /**
   * Brings both indexes in line with the registry at start-up: a changed embedder (other model
   * or dimensions) or a count that does not match (with no skill pending) re-indexes everything.
   */
  /**
   * Checks the indexes against the registry and rebuilds them when they do not match. `skills` is
   * the whole catalog, or its count and a way to load it: a start whose indexes match reads no
   * skill (at 100,000 skills, loading every record was seconds of each start).
   */
  async init(skills: readonly RoutableSkill[] | RoutableCatalog): Promise<void> {
    const catalog: RoutableCatalog = "load" in skills ? skills : { count: skills.length, load: () => skills };
    await this.vectors.ensure(this.embedder.dimensions);
    const identity = `${this.embedder.modelId}/${this.embedder.dimensions}/layout-${INDEX_LAYOUT}`;
    const previous = this.db.prepare<[string], { value: string }>("SELECT value FROM routing_meta WHERE key = ?").get(META_EMBEDDER)?.value;
    const evidenceCount = (this.db.prepare("SELECT COUNT(*) AS n FROM route_evidence").get() as { n: number }).n;
    // Skills still marked pending (a crash came before their indexing finished) explain a count
    // that does not match; the caller indexes them again in the background (RoutingService.init),
    // and a mismatch of any other cause is caught at the next start.
    const pending = this.pendingNames().length > 0;
    const stale =
      previous !== identity ||
      (!pending && ((await this.vectors.count()) !== catalog.count + evidenceCount || this.keywords.count() !== catalog.count));
    if (!stale) return;
    this.logger.info({ skills: catalog.count, embedder: identity, previous }, "re-indexing skills for routing");
    await this.reindexAll(catalog.load());
    for (const name of this.pendingNames()) this.settle(name);
    this.db
      .prepare("INSERT INTO routing_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
      .run(META_EMBEDDER, identity);
  }

  /**
   * Skills marked by {@link SkillRouter.accept} whose indexing had not finished when the process
   * stopped; start-up indexes them again (docs/performance.md#registration).
   */
  pendingNames(): string[] {
    return this.db
      .prepare<[string], { key: string }>("SELECT key FROM routing_meta WHERE key LIKE ?")
      .all(`${PENDING_PREFIX}%`)
      .map((row) => row.key.slice(PENDING_PREFIX.length));
  }

  /**
   * The part of indexing a change that must not wait: the example queries it brought are stored,
   * and the skill is marked as pending until {@link SkillRouter.index} has finished and
   * {@link SkillRouter.settle} clears the mark. Synchronous, so it is done before the caller replies.
   */
  accept(name: string, exampleQueries: readonly string[]): void {
    for (const query of exampleQueries) this.evidence.remember(name, query);
    this.db.prepare("INSERT OR IGNORE INTO routing_meta (key, value) VALUES (?, '')").run(`${PENDING_PREFIX}${name}`);
  }

  /** Clears the pending mark of {@link SkillRouter.accept}. */
  settle(name: string): void {
    this.db.prepare("DELETE FROM routing_meta WHERE key = ?").run(`${PENDING_PREFIX}${name}`);
  }

  /** Rebuilds both indexes from `skills` and the stored evidence. */
  async reindexAll(skills: readonly RoutableSkill[]): Promise<void> {
    this.keywords.clear();
    await this.vectors.ensure(this.embedder.dimensions);
    for (const skill of skills) await this.index(skill);
  }

  /** (Re)indexes one skill with its current description, status and evidence. */
  async index(skill: RoutableSkill, exampleQueries: readonly string[] = []): Promise<void> {
    for (const query of exampleQueries) this.evidence.remember(skill.name, query);
    await this.evidence.prune(skill.name);
    const evidence = this.evidence.of(skill.name);
    this.keywords.upsert([{ ...skill, evidence: evidence.map((e) => e.query) }]);
    const texts = [documentText(skill), ...evidence.map((e) => e.query)];
    const vectors = await this.embedder.embed(texts);
    const payload = vectorPayloadOf(skill);
    await this.vectors.upsert(
      vectors.map((vector, i) => ({
        id: i === 0 ? skill.name : evidenceVectorId(skill.name, evidence[i - 1]?.hash ?? ""),
        vector,
        payload,
      })),
    );
  }

  async remove(name: string): Promise<void> {
    const evidence = this.evidence.of(name);
    this.keywords.remove([name]);
    await this.vectors.remove([name, ...evidence.map((e) => evidenceVectorId(name, e.hash))]);
  }

  /**
   * The skills whose vectors (main or evidence) are nearest to `vector` among those `scope` may
   * see, nearest first, whatever their status (the caller filters further): the near-duplicate
   * screen's candidates (docs/learning.md#near-duplicates), found by the index instead of a pass
   * over the whole library.
   */
  async nearestSkills(vector: Float32Array, scope: RouteScope, limit: number): Promise<string[]> {
    const { audiences } = scopeFilter(scope);
    // Evidence vectors take slots of their own: ask for more hits than names wanted.
    const hits = await this.vectors.search(vector, {
      limit: Math.min(MAX_SEARCH_LIMIT, limit * NEAREST_OVERFETCH),
      ...(audiences ? { filter: { audiences } } : {}),
    });
    return bestPerSkill(hits)
      .slice(0, limit)
      .map((hit) => hit.id);
  }

  async route(
    query: string,
    options: {
      limit: number;
      mode: RouteMode;
      scope: RouteScope;
      exclude?: (name: string) => boolean;
      /** Skills ranked after every healthy one (degraded skills, docs/routing.md#degraded-skills). @default none */
      demote?: (name: string) => boolean;
      /**
       * The floor of an answer (docs/routing.md#no-skill-fits): when relevance is known and no
       * candidate reaches it, the route answers nothing (`noFit`). @default 0
       */
      minRelevance?: number;
      /**
       * A long query's pieces (of its beginning and its end, docs/routing.md#long-queries), each
       * ranked on its own, without clause splitting; `query` is then what the route records.
       * @default [query]
       */
      pieces?: readonly string[];
    },
  ): Promise<RouteResult> {
    const depth = Math.min(200, Math.max(SOURCE_DEPTH, options.limit * 4 + 10));
    const filter = scopeFilter(options.scope);
    const degraded = new Set<string>();
    const pieces = options.pieces ?? [query];
    let ranking: Ranking;
    if (pieces.length < 2) {
      ranking = await this.rankQuery(query, options.mode, depth, filter, degraded);
    } else {
      const rankings: Ranking[] = [];
      for (const piece of pieces) rankings.push(await this.rank(piece, options.mode, depth, filter, degraded));
      ranking = mergePieces(rankings);
    }
    const minRelevance = options.minRelevance ?? 0;
    const candidates = ranking.items.filter((item) => !options.exclude?.(item.id));
    // The floor judges the answer, not each skill: a query whose best candidate clears it keeps its
    // ranking (a second tool it needs often scores lower), one whose best does not gets nothing.
    // Filtering skill by skill cost several points of recall@5 for the same share of empty answers.
    const best = Math.max(-1, ...candidates.map((item) => item.relevance ?? Number.POSITIVE_INFINITY));
    const noFit = candidates.length > 0 && best < minRelevance;
    const kept = noFit ? [] : candidates;
    const hits = healthyFirst(kept, options.limit, options.demote).map((item) => ({
      name: item.id,
      score: item.score,
      relevance: item.relevance,
      keywordRank: item.ranks.keywords ?? 0,
      vectorRank: item.ranks.vectors ?? 0,
      keywordScore: item.scores.keywords ?? 0,
      vectorScore: item.scores.vectors ?? 0,
    }));
    const routeId = randomUUID();
    this.db
      .prepare("INSERT INTO routes (route_id, query, names, created_at, agent) VALUES (?, ?, ?, ?, ?)")
      .run(routeId, query, JSON.stringify(hits.map((h) => h.name)), Date.now(), options.scope.agentId);
    return { routeId, hits, degraded: [...degraded], noFit };
  }

  /** One query's ranking, its clauses ranked apart and merged in (docs/routing.md#multi-intent-queries). */
  private async rankQuery(
    query: string,
    mode: RouteMode,
    depth: number,
    filter: VectorSearchFilter,
    degraded: Set<string>,
  ): Promise<Ranking> {
    const ranking = await this.rank(query, mode, depth, filter, degraded);
    const clauses = this.splitClauses && (mode === "fused" || mode === "rrf") ? splitClauses(query) : [];
    if (clauses.length === 0) return ranking;
    const clauseRankings: Ranking[] = [];
    for (const clause of clauses) clauseRankings.push(await this.rank(clause, mode, depth, filter, degraded));
    return mergeClauses(ranking, clauseRankings);
  }

  /** One query's sources, fused as `mode` says, each item with its relevance. */
  private async rank(query: string, mode: RouteMode, depth: number, filter: VectorSearchFilter, degraded: Set<string>): Promise<Ranking> {
    const searchKeywords = (): RankedList => ({ source: "keywords", items: this.keywords.search(query, { limit: depth, filter }) });
    const lists: RankedList[] = [];
    let vectors: RankedList | undefined;
    if (mode !== "vectors") lists.push(searchKeywords());
    if (mode !== "keywords") {
      try {
        const [vector] = await this.embedder.embed([query]);
        const hits = vector ? await this.vectors.search(vector, { limit: depth * 2, filter }) : [];
        vectors = { source: "vectors", items: scoreWithEvidence(hits).slice(0, depth) };
        lists.push(vectors);
        const fallback = (this.vectors as { lastFallback?: string }).lastFallback;
        if (fallback) degraded.add(fallback);
      } catch (error) {
        if (!(error instanceof VectorIndexUnavailableError) && !(error instanceof Error && error.name === "EmbedderError")) throw error;
        degraded.add(`vectors unavailable (${error.message}); routed by keywords`);
        if (mode === "vectors") lists.push(searchKeywords());
      }
    }
    const fused =
      mode === "rrf"
        ? reciprocalRankFusion(lists)
        : normalizedScoreFusion(
            // One source alone (a single-source mode, or vectors unavailable) counts in full.
            lists.length < 2
              ? lists
              : lists.map((list) => ({ ...list, weight: list.source === "vectors" ? this.vectorWeight : 1 - this.vectorWeight })),
          );
    // Without a vector list there is no cosine to calibrate on: relevance stays unknown.
    const lowestCosine = vectors?.items.at(-1)?.score;
    const { mean, spread } = background(vectors?.items.map((item) => item.score ?? 0) ?? []);
    return {
      items: fused.map((item) => ({
        ...item,
        relevance:
          vectors === undefined
            ? undefined
            : relevance(this.calibration, {
                cosine: item.scores.vectors ?? lowestCosine ?? 0,
                bm25: item.scores.keywords ?? 0,
                backgroundMean: mean,
                backgroundSpread: spread,
              }),
      })),
    };
  }

  /**
   * Records whether a routed skill did the job. A success within the credit window makes the
   * route's query evidence for that skill. Only the agent the route was made for can credit it.
   * Returns true when it was credited.
   */
  async credit(routeId: string, name: string, success: boolean, skill: RoutableSkill | undefined, agentId: string): Promise<boolean> {
    const route = this.db
      .prepare<[string, string], { query: string; names: string; created_at: number }>(
        "SELECT query, names, created_at FROM routes WHERE route_id = ? AND agent = ?",
      )
      .get(routeId, agentId);
    if (!route || !(JSON.parse(route.names) as string[]).includes(name)) return false;
    // Kept for the version active now (docs/routing.md#quality-filter): a new version starts its own counters.
    this.db
      .prepare(
        `INSERT INTO route_outcomes (route_id, name, success, at, since) VALUES (?, ?, ?, ?, ${ACTIVATED_AT})
         ON CONFLICT (route_id, name) DO UPDATE SET success = MAX(success, excluded.success), at = excluded.at, since = excluded.since`,
      )
      .run(routeId, name, success ? 1 : 0, Date.now(), name);
    if (!success || Date.now() - route.created_at > this.creditWindowMs || !skill) return false;
    if (!this.evidence.remember(name, route.query)) return true;
    await this.index(skill);
    return true;
  }

  /** True when `routeId` is a route made for `agentId` that returned `name` (docs/skill-sources.md#quality-counters). */
  routeIncludes(routeId: string, name: string, agentId: string): boolean {
    const route = this.db
      .prepare<[string, string], { names: string }>("SELECT names FROM routes WHERE route_id = ? AND agent = ?")
      .get(routeId, agentId);
    return route !== undefined && (JSON.parse(route.names) as string[]).includes(name);
  }

  /** The quality counters of the active version: routed invocations (selections), successes and failures. */
  quality(name: string): RouteQuality {
    const row = this.db
      .prepare<[string, string], { selections: number; completions: number | null }>(
        `SELECT COUNT(*) AS selections, SUM(success) AS completions FROM route_outcomes WHERE name = ? AND since = ${ACTIVATED_AT}`,
      )
      .get(name, name);
    const selections = row?.selections ?? 0;
    const completions = row?.completions ?? 0;
    return { selections, completions, failures: selections - completions };
  }

  /** Forgets every routed outcome of `name` (ResetSkillQuality); returns the active version's counters as they were. */
  resetQuality(name: string): RouteQuality {
    const before = this.quality(name);
    this.db.prepare("DELETE FROM route_outcomes WHERE name = ?").run(name);
    return before;
  }

  /** How many stored queries route to `name` as evidence (docs/routing.md#learning-from-use). */
  evidenceCount(name: string): number {
    return this.evidence.count(name);
  }
}

/** The quality filter (docs/routing.md#quality-filter): selected ≥ 2 times and never completed, or a fallback rate > 0.5. */
export function failsQualityFilter(quality: RouteQuality): boolean {
  if (quality.selections >= 2 && quality.completions === 0) return true;
  return quality.selections >= 2 && quality.failures / quality.selections > 0.5;
}

/**
 * The first `limit` items with every demoted one after every healthy one, each group in rank order
 * (docs/routing.md#degraded-skills): a degraded skill keeps its place only when no healthy skill is
 * left to take it. Stops asking once `limit` healthy items are found.
 */
function healthyFirst<T extends { readonly id: string }>(items: readonly T[], limit: number, demote?: (name: string) => boolean): T[] {
  if (!demote) return items.slice(0, limit);
  const healthy: T[] = [];
  const demoted: T[] = [];
  for (const item of items) {
    if (healthy.length >= limit) break;
    (demote(item.id) ? demoted : healthy).push(item);
  }
  return [...healthy, ...demoted].slice(0, limit);
}

/**
 * What a skill's main vector is made of: its name split into words as the keyword index splits it
 * (on `_`, `-` and punctuation, camelCase and acronym boundaries: `PDF_URLTool` → `pdf url tool`),
 * and its description.
 */
export function documentText(skill: Pick<RoutableSkill, "name" | "description">): string {
  return `${nameWords(skill.name).join(" ")}: ${skill.description}`;
}
