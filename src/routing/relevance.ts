/**
 * A calibrated relevance in [0, 1] for a routed skill (docs/routing.md#relevance): the probability,
 * estimated on the development sets, that the skill is one the query needs.
 *
 * A raw cosine does not mean the same from one query to the next (a generic query is close to
 * everything, a terse one to nothing), nor from one catalog or encoder to the next. So the cosine
 * is read against the query's own background: the mean and spread of the cosines of the other
 * candidates the vector source returned for the same query (its best one left out, so a right answer
 * does not raise its own bar), pooled with a prior worth five candidates so that a catalog of a few
 * skills still has one (the spread is measured around the candidates' own mean). A skill that stands
 * out from that background, and shares words with the query, is likely the one it needs; the best
 * skill of a query that fits nothing does not stand out:
 *
 *     s         = (cosine − background mean) / max(background spread, 0.05) + ln(1 + bm25)
 *     relevance = σ(scale · s + bias)                                       σ(z) = 1 / (1 + e^(−z))
 *
 * A skill missing from the vector list takes the lowest cosine that list returned; one missing from
 * the keyword list has bm25 = 0. `scale` and `bias` are a logistic regression fitted on the top 10
 * candidates of every query of both development sets (`npm run bench:routing` prints the figures);
 * because the standardised cosine has no unit, the same fit serves every encoder.
 */
export interface RelevanceCalibration {
  readonly scale: number;
  readonly bias: number;
}

/** What a route knows of one candidate and of its query's background. */
export interface RelevanceInput {
  readonly cosine: number;
  readonly bm25: number;
  /** Mean and population standard deviation of the query's other candidates' cosines. */
  readonly backgroundMean: number;
  readonly backgroundSpread: number;
}

/** Fitted on both development sets with all-MiniLM-L6-v2 (2026-11-27). */
export const DEFAULT_CALIBRATION: RelevanceCalibration = { scale: 0.848, bias: -5.107 };
/**
 * A background spread below this is treated as this: with a handful of skills, or skills that are
 * all about equally far from the query, the spread is noise and dividing by it would make any
 * small lead look decisive.
 */
export const MIN_BACKGROUND_SPREAD = 0.05;

/** The calibration for an embedder's model id; the standardised score makes one fit serve all of them. */
export function calibrationFor(_modelId: string): RelevanceCalibration {
  return DEFAULT_CALIBRATION;
}

/**
 * What a query's background is taken to be before any candidate is seen: the median mean and spread of
 * the background cosines over both development sets (all-MiniLM-L6-v2), worth this many candidates.
 * A catalog of a few skills has too few others to measure a background; the prior stands in for the
 * rest, and fades as the candidates grow (50 of them outweigh it tenfold).
 */
export const BACKGROUND_PRIOR = { mean: 0.17, spread: 0.067, weight: 5 } as const;

/** A background assumed before any cosine is seen, worth `weight` of them. */
export interface BackgroundPrior {
  readonly mean: number;
  readonly spread: number;
  readonly weight: number;
}

/**
 * The background of a query: mean and spread of its candidates' cosines (best first, the best left
 * out), pooled with `prior` ({@link BACKGROUND_PRIOR} unless another population is measured, as
 * evidence vectors are: docs/routing.md#what-evidence-counts-for).
 */
export function background(
  cosinesBestFirst: readonly number[],
  prior: BackgroundPrior = BACKGROUND_PRIOR,
): { mean: number; spread: number } {
  const rest = cosinesBestFirst.slice(1);
  const n = rest.length;
  const k = prior.weight;
  const observed = n === 0 ? 0 : rest.reduce((a, b) => a + b, 0) / n;
  const mean = (n * observed + k * prior.mean) / (n + k);
  // The spread is taken around the candidates' own mean: measured around the pooled one, a small
  // catalog whose skills are all far from the query (mean well below the prior's) got a wide spread
  // from that gap alone, and a clear match in it ("how many yen is 50 euros" → currency_convert among
  // five unrelated skills) no longer stood out (docs/routing.md#relevance).
  const squares = rest.reduce((a, b) => a + (b - observed) * (b - observed), 0) + k * prior.spread * prior.spread;
  return { mean, spread: Math.sqrt(squares / (n + k)) };
}

export function relevance(calibration: RelevanceCalibration, input: RelevanceInput): number {
  const standardised = (input.cosine - input.backgroundMean) / Math.max(input.backgroundSpread, MIN_BACKGROUND_SPREAD);
  const z = calibration.scale * (standardised + Math.log1p(Math.max(0, input.bm25))) + calibration.bias;
  return 1 / (1 + Math.exp(-z));
}
