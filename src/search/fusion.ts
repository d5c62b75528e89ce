/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): score(d) = Σ w_s / (k + rank_s(d)).
 *
 * It fuses by rank, never by score, because BM25 scores (unbounded, per-query) and cosine
 * similarities (in [-1, 1], compressed near the top) cannot be put on one scale without
 * per-query calibration; k = 60 is the paper's value and damps the gap between rank 1 and 2.
 */

/** One ranked list to fuse, best first. */
export interface RankedList {
  /** Names the list in explanations, e.g. `vector`, `keyword`. Unique per fusion. */
  readonly source: string;
  /** Ids best first; `score` is kept for explanations, never used to fuse. */
  readonly items: ReadonlyArray<{ readonly id: string; readonly score?: number }>;
  /**
   * How much this list counts.
   * @default 1
   */
  readonly weight?: number;
}

export interface FusionOptions {
  /**
   * The rank constant: larger flattens the difference between top ranks.
   * @default 60
   */
  readonly k?: number;
  /** Keep only the best `limit` fused items. */
  readonly limit?: number;
}

/** A fused item with, per source that ranked it, its 1-based rank and original score. */
export interface FusedItem {
  readonly id: string;
  readonly score: number;
  readonly ranks: Readonly<Record<string, number>>;
  readonly scores: Readonly<Record<string, number>>;
}

export const DEFAULT_RRF_K = 60;

/**
 * Fuses ranked lists into one, best first. Ties (equal fused score) go to the item with the better
 * best rank, then to the one seen first (earlier list, earlier position), so results are stable.
 * A duplicate id within one list counts at its first (best) position only.
 */
export function reciprocalRankFusion(lists: readonly RankedList[], options: FusionOptions = {}): FusedItem[] {
  const k = options.k ?? DEFAULT_RRF_K;
  if (!(k >= 0)) throw new RangeError(`RRF k must be a non-negative number, got ${k}`);
  const fused = new FusedScores();
  for (const list of lists) {
    const weight = list.weight ?? 1;
    list.items.forEach((item, index) => fused.add(list.source, item.id, index + 1, item.score, weight / (k + index + 1)));
  }
  return fused.ranked(options.limit);
}

/**
 * Each item's contributions across lists, ranked with the tie-break every fusion shares: equal
 * scores go to the better best rank, then to the item seen first. A list's second mention of an
 * id counts for nothing.
 */
export class FusedScores {
  private readonly entries = new Map<
    string,
    { score: number; ranks: Record<string, number>; scores: Record<string, number>; best: number; order: number }
  >();

  add(source: string, id: string, rank: number, score: number | undefined, contribution: number): void {
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { score: 0, ranks: {}, scores: {}, best: rank, order: this.entries.size };
      this.entries.set(id, entry);
    }
    if (entry.ranks[source] !== undefined) return;
    entry.ranks[source] = rank;
    if (score !== undefined) entry.scores[source] = score;
    entry.score += contribution;
    entry.best = Math.min(entry.best, rank);
  }

  ranked(limit?: number): FusedItem[] {
    const ranked = [...this.entries.entries()]
      .sort(([, a], [, b]) => b.score - a.score || a.best - b.best || a.order - b.order)
      .map(([id, { score, ranks, scores }]) => ({ id, score, ranks, scores }));
    return limit === undefined ? ranked : ranked.slice(0, Math.max(0, limit));
  }
}
