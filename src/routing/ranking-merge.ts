import type { FusedItem } from "../search/index.js";

/** A clause of a multi-intent query places this many of its best skills right after the whole query's best. */
const CLAUSE_TOP = 2;

/** One source's or one fusion's ranking of a query, best first, with each item's relevance. */
export interface Ranking {
  readonly items: ReadonlyArray<FusedItem & { readonly relevance: number | undefined }>;
}

/**
 * Multi-intent queries: the whole query's best skill first, then each clause's best
 * {@link CLAUSE_TOP}, then the rest of the whole query's ranking; an item keeps the best relevance
 * any of the rankings gave it.
 */
export function mergeClauses(whole: Ranking, clauses: readonly Ranking[]): Ranking {
  const bestRelevance = new Map<string, number>();
  for (const ranking of [whole, ...clauses]) {
    for (const item of ranking.items) {
      if (item.relevance !== undefined && item.relevance > (bestRelevance.get(item.id) ?? -1)) bestRelevance.set(item.id, item.relevance);
    }
  }
  const ordered = [...whole.items.slice(0, 1), ...clauses.flatMap((c) => c.items.slice(0, CLAUSE_TOP)), ...whole.items.slice(1)];
  const seen = new Set<string>();
  const items = ordered.filter((item) => !seen.has(item.id) && seen.add(item.id));
  return { items: items.map((item) => ({ ...item, relevance: bestRelevance.get(item.id) ?? item.relevance })) };
}

/**
 * A long query's pieces (docs/routing.md#long-queries): each skill keeps the best relevance any piece
 * gave it, and the pieces' rankings are interleaved (first items, then second items, …) and ordered
 * by that relevance, so the piece that states the task decides; without relevance (no vector source)
 * the interleaved order stands.
 */
export function mergePieces(rankings: readonly Ranking[]): Ranking {
  const byId = new Map<string, Ranking["items"][number]>();
  const longest = Math.max(0, ...rankings.map((r) => r.items.length));
  for (let i = 0; i < longest; i++) {
    for (const ranking of rankings) {
      const item = ranking.items[i];
      if (item === undefined) continue;
      const kept = byId.get(item.id);
      if (kept === undefined) byId.set(item.id, item);
      else if (item.relevance !== undefined && (kept.relevance === undefined || item.relevance > kept.relevance)) {
        // The piece that fits better speaks for the skill: its scores and ranks along with its relevance.
        byId.set(item.id, item);
      }
    }
  }
  const items = [...byId.values()];
  if (items.every((item) => item.relevance !== undefined)) items.sort((a, b) => (b.relevance ?? 0) - (a.relevance ?? 0));
  return { items };
}
