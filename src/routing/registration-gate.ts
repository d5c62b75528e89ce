import { performance } from "node:perf_hooks";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import {
  canSee,
  type ExampleQueryRank,
  type GateCandidate,
  ROUTING_GATE_LIMITS,
  type RoutingGate,
  type RoutingGateReport,
  type ShadowedQuery,
  type SkillRegistry,
} from "../control/index.js";
import type { Embedder } from "../embedding/index.js";
import type { Caller } from "../identity/index.js";
import {
  type KeywordIndex,
  normalizedScoreFusion,
  type RankedList,
  VectorIndexUnavailableError,
  type VectorIndex,
  type VectorSearchFilter,
} from "../search/index.js";
import { background, calibrationFor, type RelevanceCalibration, relevance } from "./relevance.js";
import { evidenceHash, evidenceText, evidenceVectorId, MAX_EVIDENCE_PER_SKILL, scoreWithEvidence } from "./route-evidence.js";
import { DEFAULT_VECTOR_WEIGHT, documentText, ROUTABLE_STATUSES, scopeFilter } from "./skill-router.js";

export interface RegistrationGateOptions {
  /** The routing connection to registry.db: the indexes and the stored evidence. */
  readonly db: Database.Database;
  readonly embedder: Embedder;
  readonly vectors: VectorIndex;
  readonly keywords: KeywordIndex;
  /** The registry has the last word on what a route returns (status, switch, access). */
  readonly registry: Pick<SkillRegistry, "get">;
  readonly logger: Logger;
  /** As the router fuses (docs/routing.md#fusion). @default {@link DEFAULT_VECTOR_WEIGHT} */
  readonly vectorWeight?: number;
  /** @default the calibration fitted for the embedder's model */
  readonly calibration?: RelevanceCalibration;
  /** The relevance floor routes apply by default: an example below it is not found. @default 0 */
  readonly minRelevance?: number;
  /** Resolves once the index writes in flight are done, so the catalog includes every acknowledged change. */
  readonly settled?: () => Promise<void>;
  /** Skills routes leave out whatever their rank (the quality filters). @default none */
  readonly excluded?: (name: string) => boolean;
}

/** Candidates asked of each source, as a route of the default limit asks (docs/routing.md#hybrid-ranking). */
const GATE_DEPTH = 50;
const EVIDENCE_SEPARATOR = "::evidence::";

/**
 * One ranked query: skills best first (healthy before degraded, as routes order them), as far as
 * the new skill, the skill asked about and a route's default limit; and the new skill's relevance.
 */
interface Ranking {
  readonly names: readonly string[];
  readonly ownRelevance: number | undefined;
}

/**
 * RegisterSkill's routing gate (docs/routing.md#the-routing-gate): ranks a skill about to be
 * registered for its own example queries, and for the queries of the skills it competes with,
 * against the indexes as they stand, without writing to them. Each query is ranked as a new query
 * of those words would be: no skill counts that very query as evidence (leave one out), so a skill
 * is not found merely because its example is stored for it. The new skill's keyword document
 * exists only inside a savepoint that is rolled back before anything else runs; its vectors are
 * compared in process.
 */
export class RegistrationGate implements RoutingGate {
  private readonly vectorWeight: number;
  private readonly calibration: RelevanceCalibration;
  private readonly minRelevance: number;

  constructor(private readonly options: RegistrationGateOptions) {
    this.vectorWeight = options.vectorWeight ?? DEFAULT_VECTOR_WEIGHT;
    this.calibration = options.calibration ?? calibrationFor(options.embedder.modelId);
    this.minRelevance = options.minRelevance ?? 0;
  }

  async report(candidate: GateCandidate, exampleQueries: readonly string[], caller: Caller): Promise<RoutingGateReport> {
    const examples = unique(exampleQueries.map(evidenceText).filter((q) => q !== ""));
    if (examples.length === 0) return { examples: [], shadowed: [], warnings: [], degraded: [] };
    await this.options.settled?.();
    const started = performance.now();
    const filter = scopeFilter({
      agentId: caller.agentId,
      everything: caller.admin,
      ...(caller.userId === undefined ? {} : { userId: caller.userId }),
    });
    // What the new skill will be indexed with: its name and description, the evidence its name
    // already holds (a new version keeps it), and its example queries, newest kept.
    const stored = this.storedEvidence(candidate.name);
    const evidence = unique([...stored.filter((q) => !examples.includes(q)), ...examples]).slice(-MAX_EVIDENCE_PER_SKILL);
    const degraded = new Set<string>();
    const vectors = await this.embedAll([documentText(candidate), ...evidence], degraded);
    const own: OwnEntry = { candidate, caller, evidence, vectors, standings: new Map() };

    const ranked: ExampleQueryRank[] = [];
    const competitors = new Map<string, number>();
    for (const query of examples) {
      const ranking = await this.rank(query, vectors?.[1 + evidence.indexOf(query)], own, filter, degraded);
      const position = ranking.names.indexOf(candidate.name);
      const rank = position + 1;
      const above = ranking.names.slice(0, position);
      const rel = ranking.ownRelevance;
      ranked.push({
        query,
        rank,
        relevance: rel,
        outrankedBy: above.slice(0, ROUTING_GATE_LIMITS.outrankedListed),
        // 0: not returned at all (no keyword in common, and no vectors to rank it by).
        found: rank > 0 && rank <= ROUTING_GATE_LIMITS.foundWithin && (rel === undefined || rel >= this.minRelevance),
      });
      // The skills a route of these queries would show beside it are the ones it competes with.
      ranking.names.slice(0, ROUTING_GATE_LIMITS.foundWithin + 1).forEach((name, i) => {
        if (name !== candidate.name && (competitors.get(name) ?? Infinity) > i) competitors.set(name, i);
      });
    }

    const shadowed: ShadowedQuery[] = [];
    const chosen = [...competitors.entries()].sort((a, b) => a[1] - b[1]).slice(0, ROUTING_GATE_LIMITS.competitors);
    const checks = chosen.flatMap(([competitor]) =>
      this.storedEvidence(competitor)
        .slice(-ROUTING_GATE_LIMITS.queriesPerCompetitor)
        .reverse()
        .map((query) => ({ competitor, query })),
    );
    // One batch: a competitor's queries were embedded when it was indexed, so these are cache hits.
    const checkVectors =
      vectors && checks.length > 0
        ? await this.embedAll(
            checks.map((c) => c.query),
            degraded,
          )
        : undefined;
    for (const [i, { competitor, query }] of checks.entries()) {
      const ranking = await this.rank(query, checkVectors?.[i], own, filter, degraded, competitor);
      const rank = ranking.names.indexOf(candidate.name) + 1;
      const skillRank = ranking.names.indexOf(competitor) + 1;
      // Shadowed: the new skill comes first where the competitor was within a route's default
      // limit without it (one place lower now, since the new skill is above it).
      if (rank > 0 && skillRank > rank && skillRank <= ROUTING_GATE_LIMITS.foundWithin + 1) {
        const owned = caller.admin || this.options.registry.get(competitor)?.owner === caller.agentId;
        shadowed.push({ skill: competitor, query: owned ? query : undefined, rank, skillRank });
      }
    }
    this.options.logger.debug(
      { skill: candidate.name, examples: examples.length, checked: checks.length, ms: Math.round(performance.now() - started) },
      "routing gate ranked the example queries",
    );
    return { examples: ranked, shadowed, warnings: warningsOf(ranked, shadowed), degraded: [...degraded] };
  }

  /** A skill's stored evidence (example and credited queries), oldest first. */
  private storedEvidence(name: string): string[] {
    return this.options.db
      .prepare<[string, number], { query: string }>(
        "SELECT query FROM (SELECT query, at FROM route_evidence WHERE name = ? ORDER BY at DESC LIMIT ?) ORDER BY at",
      )
      .all(name, MAX_EVIDENCE_PER_SKILL)
      .map((row) => row.query);
  }

  /** The texts' vectors; undefined (and a `degraded` line) when the embedder cannot answer. */
  private async embedAll(texts: readonly string[], degraded: Set<string>): Promise<Float32Array[] | undefined> {
    try {
      return await this.options.embedder.embed(texts);
    } catch (error) {
      if (!(error instanceof Error && error.name === "EmbedderError")) throw error;
      degraded.add(`vectors unavailable (${error.message}); ranked by keywords`);
      return undefined;
    }
  }

  /**
   * Ranks `query` as a route would, with the new skill in the catalog and without that query as
   * anyone's evidence: the keyword search runs against a rolled-back savepoint holding the new
   * skill's document (and the holders' documents without the query), the vector search against
   * the index with the new skill's vectors compared in process; both fused and calibrated as in
   * SkillRouter.rank.
   */
  private async rank(
    query: string,
    queryVector: Float32Array | undefined,
    own: OwnEntry,
    filter: VectorSearchFilter,
    degraded: Set<string>,
    until?: string,
  ): Promise<Ranking> {
    const text = evidenceText(query);
    const hash = evidenceHash(text);
    const ownEvidence = own.evidence.filter((e) => !sameQuery(e, text));
    const keywordHits = this.keywordHits(query, text, own, ownEvidence, filter);
    const lists: RankedList[] = [{ source: "keywords", items: keywordHits }];
    let vectorItems: Array<{ id: string; score: number }> | undefined;
    if (own.vectors && queryVector) {
      try {
        const hits = await this.options.vectors.search(queryVector, { limit: GATE_DEPTH * 2, filter });
        // The new skill's entries (an earlier version's) and this very query's evidence vectors are left out;
        // the new skill's own take their places, and the best the index would return are scored as a route scores them.
        const others = hits.filter((hit) => {
          const [name, evidence] = hit.id.split(EVIDENCE_SEPARATOR);
          return name !== own.candidate.name && evidence !== hash;
        });
        const entries = [...others, ...this.ownHits(queryVector, own, ownEvidence)].sort((a, b) => b.score - a.score);
        vectorItems = scoreWithEvidence(entries.slice(0, GATE_DEPTH * 2)).slice(0, GATE_DEPTH);
        lists.push({ source: "vectors", items: vectorItems });
      } catch (error) {
        if (!(error instanceof VectorIndexUnavailableError) && !(error instanceof Error && error.name === "EmbedderError")) throw error;
        degraded.add(`vectors unavailable (${error.message}); ranked by keywords`);
      }
    }
    const fused = normalizedScoreFusion(
      lists.length < 2
        ? lists
        : lists.map((list) => ({ ...list, weight: list.source === "vectors" ? this.vectorWeight : 1 - this.vectorWeight })),
    );
    const lowestCosine = vectorItems?.at(-1)?.score;
    const healthy: string[] = [];
    const demoted: string[] = [];
    let ownRelevance: number | undefined;
    for (const item of fused) {
      // Far enough: the new skill and `until` are placed, and a route's default limit is filled.
      const placed = healthy.includes(own.candidate.name) && (until === undefined || healthy.includes(until) || demoted.includes(until));
      if (placed && healthy.length > ROUTING_GATE_LIMITS.foundWithin) break;
      const isOwn = item.id === own.candidate.name;
      const standing = isOwn ? "healthy" : this.standing(item.id, own);
      if (standing === "left out") continue;
      if (isOwn && vectorItems !== undefined) {
        const { mean, spread } = background(vectorItems.map((v) => v.score));
        ownRelevance = relevance(this.calibration, {
          cosine: item.scores.vectors ?? lowestCosine ?? 0,
          bm25: item.scores.keywords ?? 0,
          backgroundMean: mean,
          backgroundSpread: spread,
        });
      }
      (standing === "degraded" ? demoted : healthy).push(item.id);
    }
    return { names: [...healthy, ...demoted], ownRelevance };
  }

  /**
   * BM25 hits for `query` with the new skill's document in the index and `text` in nobody's
   * evidence. Synchronous from the savepoint to its rollback, so nothing else on this connection
   * runs in between and nothing of it stays.
   */
  private keywordHits(query: string, text: string, own: OwnEntry, ownEvidence: readonly string[], filter: VectorSearchFilter) {
    const { db, keywords } = this.options;
    const holders = db
      .prepare<[string], { name: string }>("SELECT name FROM route_evidence WHERE hash = ?")
      .all(evidenceHash(text))
      .map((row) => row.name)
      .filter((name) => name !== own.candidate.name);
    db.exec("SAVEPOINT routing_gate");
    try {
      keywords.upsert([
        {
          name: own.candidate.name,
          description: own.candidate.description,
          owner: own.caller.agentId,
          visibility: "private",
          status: "active",
          evidence: ownEvidence,
        },
      ]);
      for (const holder of holders)
        keywords.replaceEvidence(
          holder,
          keywords.evidence(holder).filter((line) => !sameQuery(line, text)),
        );
      return keywords.search(query, { limit: GATE_DEPTH, filter });
    } finally {
      db.exec("ROLLBACK TO routing_gate");
      db.exec("RELEASE routing_gate");
    }
  }

  /** The new skill's entries as the vector index would return them: its main vector and each piece of its evidence. */
  private ownHits(queryVector: Float32Array, own: OwnEntry, ownEvidence: readonly string[]): Array<{ id: string; score: number }> {
    const vectors = own.vectors ?? [];
    const name = own.candidate.name;
    const hits = [{ id: name, score: dot(queryVector, vectors[0]) }];
    own.evidence.forEach((query, i) => {
      if (ownEvidence.includes(query))
        hits.push({ id: evidenceVectorId(name, evidenceHash(query)), score: dot(queryVector, vectors[i + 1]) });
    });
    return hits;
  }

  /**
   * Whether a route would return `name` to the caller now (the registry has the last word, then the
   * quality filters), and a degraded skill after every healthy one; looked up once per report.
   */
  private standing(name: string, own: OwnEntry): Standing {
    const known = own.standings.get(name);
    if (known) return known;
    const skill = this.options.registry.get(name);
    const standing: Standing =
      !skill || !ROUTABLE_STATUSES.includes(skill.status) || !skill.enabled || !canSee(skill, own.caller) || this.options.excluded?.(name)
        ? "left out"
        : skill.status === "degraded"
          ? "degraded"
          : "healthy";
    own.standings.set(name, standing);
    return standing;
  }
}

/** The new skill as the gate ranks it: vectors of its document text, then of each piece of its evidence. */
interface OwnEntry {
  readonly candidate: GateCandidate;
  readonly caller: Caller;
  readonly evidence: readonly string[];
  readonly vectors: readonly Float32Array[] | undefined;
  /** The other skills' standing, looked up once per report. */
  readonly standings: Map<string, Standing>;
}

type Standing = "healthy" | "degraded" | "left out";

function warningsOf(examples: readonly ExampleQueryRank[], shadowed: readonly ShadowedQuery[]): string[] {
  const warnings: string[] = [];
  for (const example of examples) {
    if (example.found) continue;
    const why =
      example.rank === 0
        ? "no ranking returns it"
        : example.rank > ROUTING_GATE_LIMITS.foundWithin
          ? `ranks ${example.rank}, below ${example.outrankedBy.join(", ")}`
          : `its relevance ${example.relevance?.toFixed(2) ?? "?"} is below the routes' floor`;
    warnings.push(`not found by its example query ${JSON.stringify(example.query)}: ${why} (docs/routing.md#the-routing-gate)`);
  }
  const bySkill = new Map<string, ShadowedQuery[]>();
  for (const s of shadowed) bySkill.set(s.skill, [...(bySkill.get(s.skill) ?? []), s]);
  for (const [skill, queries] of bySkill) {
    const shown = queries.filter((q) => q.query !== undefined).map((q) => JSON.stringify(q.query));
    warnings.push(
      `would shadow ${skill}: ranks above it for ${queries.length} of its queries${shown.length > 0 ? ` (${shown.join(", ")})` : ""}`,
    );
  }
  return warnings;
}

/** Evidence and keyword lines compare as the keyword index dedupes them: case and spacing aside. */
function sameQuery(a: string, b: string): boolean {
  return a.replace(/\s+/g, " ").trim().toLowerCase() === b.replace(/\s+/g, " ").trim().toLowerCase();
}

function unique(queries: readonly string[]): string[] {
  return [...new Set(queries)];
}

function dot(a: Float32Array, b: Float32Array | undefined): number {
  if (!b) return 0;
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
