/**
 * A calibrated relevance in [0, 1] for a routed skill (docs/routing.md#relevance): the probability,
 * estimated on the development set, that the skill is one the query needs, from what a route knows
 * in absolute terms — the cosine similarity of the best vector hit and the BM25 score — so that
 * the same number means the same thing in every query (the fused score is relative to the other
 * candidates of its query and cannot say "nothing here fits").
 *
 *     relevance = σ(vector · cosine + keyword · ln(1 + bm25) + bias)
 *
 * A skill missing from the vector list takes the lowest cosine that list returned; one missing from
 * the keyword list has bm25 = 0. The coefficients are a logistic regression fitted on the top 10
 * fused candidates of every development-set query (`npm run bench:routing` prints a fresh fit and
 * the reliability table beside these), per encoder, since each model spreads cosines differently.
 */
export interface RelevanceCalibration {
  readonly vector: number;
  readonly keyword: number;
  readonly bias: number;
}

/** Fitted for all-MiniLM-L6-v2 on the development set (2026-11-25). */
export const MINILM_CALIBRATION: RelevanceCalibration = { vector: 4.346, keyword: 1.11, bias: -5.19 };
/** Fitted for USE-lite on the development set (2026-11-25). */
export const USE_LITE_CALIBRATION: RelevanceCalibration = { vector: 1.217, keyword: 1.591, bias: -4.984 };

/**
 * The calibration for an embedder's model id. A model nobody fitted (an OpenAI-compatible one)
 * gets MiniLM's, which is only a starting point: its cosines may sit elsewhere, so tune
 * `min_relevance` for it (docs/routing.md#relevance).
 */
export function calibrationFor(modelId: string): RelevanceCalibration {
  if (modelId.startsWith("use-lite")) return USE_LITE_CALIBRATION;
  return MINILM_CALIBRATION;
}

export function relevance(calibration: RelevanceCalibration, cosine: number, bm25: number): number {
  const z = calibration.vector * cosine + calibration.keyword * Math.log1p(Math.max(0, bm25)) + calibration.bias;
  return 1 / (1 + Math.exp(-z));
}
