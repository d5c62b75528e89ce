import { type FusedItem, FusedScores, type RankedList } from "./fusion.js";

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
  const fused = new FusedScores();
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
    [...seen.entries()].forEach(([id, score], index) =>
      fused.add(list.source, id, index + 1, score, weight * (max === min ? 1 : (score - min) / (max - min))),
    );
  }
  return fused.ranked(options.limit);
}
