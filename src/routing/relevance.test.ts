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

  it("serves every encoder with one fit (the standardised cosine has no unit)", () => {
    expect(calibrationFor("use-lite-en@0.2.0")).toBe(DEFAULT_CALIBRATION);
    expect(calibrationFor("openai:text-embedding-3-small")).toBe(DEFAULT_CALIBRATION);
  });
});
