import { describe, expect, it } from "vitest";
import { BACKGROUND_PRIOR, background, calibrationFor, DEFAULT_CALIBRATION, MIN_BACKGROUND_SPREAD, relevance } from "./relevance.js";

const input = (cosine: number, bm25: number, backgroundMean = 0.1, backgroundSpread = 0.08) => ({
  cosine,
  bm25,
  backgroundMean,
  backgroundSpread,
});

describe("relevance", () => {
  it("is a probability that grows with how far the cosine stands out from the query's background, and with BM25", () => {
    const low = relevance(DEFAULT_CALIBRATION, input(0.15, 0));
    const mid = relevance(DEFAULT_CALIBRATION, input(0.5, 0));
    const high = relevance(DEFAULT_CALIBRATION, input(0.5, 20));
    expect(low).toBeGreaterThan(0);
    expect(low).toBeLessThan(mid);
    expect(mid).toBeLessThan(high);
    expect(high).toBeLessThan(1);
    expect(relevance(DEFAULT_CALIBRATION, input(0.5, -3))).toBe(relevance(DEFAULT_CALIBRATION, input(0.5, 0)));
  });

  it("reads the same cosine against its query's background: a high cosine among high ones is not relevant", () => {
    expect(relevance(DEFAULT_CALIBRATION, input(0.6, 0, 0.55, 0.05))).toBeLessThan(
      relevance(DEFAULT_CALIBRATION, input(0.4, 0, 0.05, 0.05)),
    );
  });

  it("takes the background from every candidate but the best, pooled with a prior that stands in for a small catalog", () => {
    expect(background([])).toEqual({ mean: BACKGROUND_PRIOR.mean, spread: expect.closeTo(BACKGROUND_PRIOR.spread, 10) as number });
    expect(background([0.9])).toEqual(background([]));
    const many = background([0.9, ...Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? 0.0 : 0.2))]);
    expect(many.mean).toBeCloseTo(0.1, 2);
    expect(many.spread).toBeCloseTo(0.1, 1);
    expect(relevance(DEFAULT_CALIBRATION, input(0.3, 0, 0.2, 0))).toBe(
      relevance(DEFAULT_CALIBRATION, input(0.3, 0, 0.2, MIN_BACKGROUND_SPREAD)),
    );
  });

  it("lets a clear match stand out in a small catalog whose other skills are all far from the query", () => {
    // "how many yen is 50 euros" against five unrelated skills (MiniLM cosines): currency_convert
    // at 0.396 is the answer; measuring the spread around the prior's mean instead of the
    // candidates' own made the gap between the two means look like spread, and emptied this answer.
    const cosines = [0.396, 0.059, -0.033, -0.071, -0.095];
    const { mean, spread } = background(cosines);
    expect(relevance(DEFAULT_CALIBRATION, { cosine: 0.396, bm25: 0, backgroundMean: mean, backgroundSpread: spread })).toBeGreaterThan(0.2);
    // A query that fits none of them ("book me a flight to Paris") stays below any sensible floor.
    const flight = background([0.175, 0.148, 0.077, 0.076, -0.057]);
    expect(
      relevance(DEFAULT_CALIBRATION, { cosine: 0.175, bm25: 0, backgroundMean: flight.mean, backgroundSpread: flight.spread }),
    ).toBeLessThan(0.03);
  });

  it("serves every encoder with one fit (the standardised cosine has no unit)", () => {
    expect(calibrationFor("use-lite-en@0.2.0")).toBe(DEFAULT_CALIBRATION);
    expect(calibrationFor("openai:text-embedding-3-small")).toBe(DEFAULT_CALIBRATION);
  });
});
