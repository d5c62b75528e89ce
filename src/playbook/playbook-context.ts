import { randomUUID } from "node:crypto";
import { InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import {
  audienceOf,
  MAX_SEARCH_LIMIT,
  PUBLIC_AUDIENCE,
  reciprocalRankFusion,
  searchedQuery,
  type VectorSearchFilter,
  type VectorSearchHit,
} from "../search/index.js";
import { type LessonRecord, PLAYBOOK_HEADER } from "./lesson.js";
import { mustGet, type PlaybookCore, viewOf } from "./playbook-core.js";
import { PLAYBOOK_LIMITS, type PlaybookContext } from "./playbook-types.js";

/** The candidates the vector search returns before the distance cut and the re-rank. */
const VECTOR_FETCH = 100;
/** The keyword hits consulted by the re-rank. */
const KEYWORD_FETCH = 200;
/** Showings past every credit window are forgotten at most this often. */
const FORGET_EVERY_MS = 60_000;

/** GetPlaybookContext; it remembers when old showings were last forgotten, so it is one per service. */
export class PlaybookContextRetrieval {
  /** When showings past every credit window were last forgotten. */
  private lastForget = Number.NEGATIVE_INFINITY;

  constructor(private readonly core: PlaybookCore) {}

  /**
   * Vector search among the caller's own and the public active lessons, keeping those at cosine
   * distance below `maxDistance`, re-ranked with BM25 (rank fusion), top `limit`. Every lesson
   * returned counts a retrieval.
   */
  async context(query: string, requestedLimit: number, caller: Caller): Promise<PlaybookContext> {
    const core = this.core;
    const trimmed = query.trim();
    if (trimmed === "") throw new InvalidArgumentError("query", "is empty: pass the task or user message the lessons are for");
    const { text, pieces, warning } = searchedQuery(trimmed);
    const warnings = warning === undefined ? [] : [warning];
    const limit = requestedLimit === 0 ? core.policy.contextLimit : requestedLimit;
    if (!Number.isInteger(limit) || limit < 1 || limit > PLAYBOOK_LIMITS.maxContextLimit) {
      throw new InvalidArgumentError("limit", `must be in [1, ${PLAYBOOK_LIMITS.maxContextLimit}] (0 means ${core.policy.contextLimit})`);
    }
    const filter = playbookFilter(caller.agentId);
    // A long query's pieces (its beginning and end) are searched apart; a lesson keeps its closest
    // piece (docs/routing.md#long-queries).
    const vectors = await core.embedder.embed(pieces);
    if (vectors.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    const searchLimit = Math.min(MAX_SEARCH_LIMIT, Math.max(VECTOR_FETCH, limit * 4));
    const hits = closestPerId(await Promise.all(vectors.map((vector) => core.vectors.search(vector, { limit: searchLimit, filter }))));
    const near = hits.filter((hit) => 1 - hit.score < core.policy.maxDistance);
    if (near.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    // Defence in depth: the registry's view of each candidate decides, not the index payload.
    const byId = new Map(
      core.store
        .getMany(near.map((h) => h.id))
        .filter((l) => l.state === "active" && (l.owner === caller.agentId || l.visibility === "public"))
        .map((l) => [l.id, l]),
    );
    const candidates = near.filter((h) => byId.has(h.id));
    const keywordRanks = core.keywords.search(text, { limit: KEYWORD_FETCH, filter }).filter((hit) => byId.has(hit.id));
    const chosen = reciprocalRankFusion(
      [
        { source: "vector", items: candidates },
        { source: "keyword", items: keywordRanks },
      ],
      { limit },
    ).filter((item) => item.ranks.vector !== undefined);
    if (chosen.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    const retrievalId = randomUUID();
    const now = core.clock();
    const ids = chosen.map((c) => c.id);
    core.store.recordRetrievals(retrievalId, caller.agentId, ids, now);
    if (now - this.lastForget >= FORGET_EVERY_MS) {
      this.lastForget = now;
      core.store.forgetRetrievalsBefore(now - PLAYBOOK_LIMITS.maxCreditWindowSeconds * 1000);
    }
    core.mirror.schedule();
    core.events.retrieved?.(ids.length);
    const lessons = ids.map((id) => viewOf(core, mustGet(core, id), now));
    for (const [i, lesson] of lessons.entries()) {
      core.logger.debug(
        {
          retrievalId,
          agent: caller.agentId,
          lesson: lesson.id,
          source: lesson.source,
          sourceChallengeHash: lesson.sourceChallengeHash,
          distance: 1 - (chosen[i]?.scores.vector ?? 0),
        },
        "lesson retrieved",
      );
    }
    return { context: formatContext(lessons), lessons, retrievalId, warnings };
  }
}

/** The block injected into prompts: the header, then one entry per lesson. */
export function formatContext(lessons: readonly LessonRecord[]): string {
  if (lessons.length === 0) return "";
  const entries = lessons.map((lesson) => {
    const lines = [`- When: ${oneLine(lesson.trigger)}`];
    if (lesson.antiPattern !== "") lines.push(`  Avoid: ${oneLine(lesson.antiPattern)}`);
    lines.push(`  Do: ${oneLine(lesson.correctPattern)}`);
    return lines.join("\n");
  });
  return `${PLAYBOOK_HEADER}\n${entries.join("\n")}\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The caller's own private lessons and every public one, active only. */
function playbookFilter(agentId: string): VectorSearchFilter {
  return { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, audienceOf(agentId, "private")] };
}

/** Hits of several searches as one list, best first: each id with its best score (its closest query). */
function closestPerId(lists: ReadonlyArray<readonly VectorSearchHit[]>): VectorSearchHit[] {
  const best = new Map<string, VectorSearchHit>();
  for (const hit of lists.flat()) {
    const kept = best.get(hit.id);
    if (kept === undefined || hit.score > kept.score) best.set(hit.id, hit);
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}
