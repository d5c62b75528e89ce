import type { FusedItem } from "../search/index.js";

/** A clause of a multi-intent query places this many of its best skills in the merged ranking. */
const CLAUSE_TOP = 2;
/**
 * A clause whose best relevance is below this fits no skill on its own: most often a sentence of
 * context around the ask ("I've received a document as an image named 'example.jpg'."), not an
 * intent of its own (docs/routing.md#multi-intent-queries). Its picks go after the whole query's
 * best two instead of right after its best. Measured on both development sets: anywhere from 0.085
 * to 0.3 gave the same recall@5; 0.15 sits in the middle of that range.
 */
export const CLAUSE_MIN_RELEVANCE = 0.15;
/** How many of the whole query's best skills come before the picks of a clause below {@link CLAUSE_MIN_RELEVANCE}. */
const WHOLE_BEFORE_WEAK_CLAUSES = 2;

/** One source's or one fusion's ranking of a query, best first, with each item's relevance. */
export interface Ranking {
  readonly items: ReadonlyArray<FusedItem & { readonly relevance: number | undefined }>;
}

/**
 * Multi-intent queries: the whole query's best skill first, then the best {@link CLAUSE_TOP} of each
 * clause that fits a skill on its own (its best relevance reaches {@link CLAUSE_MIN_RELEVANCE}, or
 * relevance is unknown), then the whole query's second best, then the best {@link CLAUSE_TOP} of each
 * other clause, then the rest of the whole query's ranking; an item keeps the best relevance any of
 * the rankings gave it. A clause of context is not dropped: "My username is JaneSmith." after an
 * ask still brings the login tool the ask needs.
 */
export function mergeClauses(whole: Ranking, clauses: readonly Ranking[]): Ranking {
  const bestRelevance = new Map<string, number>();
  for (const ranking of [whole, ...clauses]) {
    for (const item of ranking.items) {
      if (item.relevance !== undefined && item.relevance > (bestRelevance.get(item.id) ?? -1)) bestRelevance.set(item.id, item.relevance);
    }
  }
  const fits = (clause: Ranking): boolean =>
    clause.items.some((item) => item.relevance === undefined || item.relevance >= CLAUSE_MIN_RELEVANCE);
  const picks = (chosen: readonly Ranking[]) => chosen.flatMap((c) => c.items.slice(0, CLAUSE_TOP));
  const ordered = [
    ...whole.items.slice(0, 1),
    ...picks(clauses.filter(fits)),
    ...whole.items.slice(1, WHOLE_BEFORE_WEAK_CLAUSES),
    ...picks(clauses.filter((c) => !fits(c))),
    ...whole.items.slice(WHOLE_BEFORE_WEAK_CLAUSES),
  ];
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
