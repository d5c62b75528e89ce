import type { FusedItem, RankedList } from "./fusion.js";

export interface ScoreFusionOptions {
  /** Keep only the best `limit` fused items. */
  readonly limit?: number;
}

/**
 * Normalised score fusion (docs/routing.md#fusion): each list's scores are min-max normalised over
 * the items it returned (best → 1, worst → 0; a list whose scores are all equal gives 1), an item a
 * list did not return counts 0 there, and the fused score is Σ weight × normalised score.
 *
 * Unlike reciprocal rank fusion it keeps how far apart the candidates are: a vector hit far ahead
 * of the rest stays ahead when keywords only mildly disagree. Weights are chosen by
 * cross-validation (`npm run bench:routing`). Every list must carry scores (higher is better).
 * Ties go to the better best rank, then to the item seen first, as in reciprocal rank fusion.
 */
export function normalizedScoreFusion(lists: readonly RankedList[], options: ScoreFusionOptions = {}): FusedItem[] {
  const fused = new Map<
    string,
    { score: number; ranks: Record<string, number>; scores: Record<string, number>; best: number; order: number }
  >();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    const seen = new Map<string, number>();
    for (const item of list.items) {
      if (item.score === undefined || !Number.isFinite(item.score)) {
        throw new RangeError(`score fusion needs a finite score for every item (list ${list.source}, item ${item.id})`);
      }
      if (!seen.has(item.id)) seen.set(item.id, item.score);
    }
    const values = [...seen.values()];
    const max = Math.max(...values);
    const min = Math.min(...values);
    [...seen.entries()].forEach(([id, score], index) => {
      const rank = index + 1;
      let entry = fused.get(id);
      if (!entry) {
        entry = { score: 0, ranks: {}, scores: {}, best: rank, order: fused.size };
        fused.set(id, entry);
      }
      entry.ranks[list.source] = rank;
      entry.scores[list.source] = score;
      entry.score += weight * (max === min ? 1 : (score - min) / (max - min));
      entry.best = Math.min(entry.best, rank);
    });
  }
  const ranked = [...fused.entries()]
    .sort(([, a], [, b]) => b.score - a.score || a.best - b.best || a.order - b.order)
    .map(([id, { score, ranks, scores }]) => ({ id, score, ranks, scores }));
  return options.limit === undefined ? ranked : ranked.slice(0, Math.max(0, options.limit));
}
