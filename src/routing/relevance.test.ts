import { describe, expect, it } from "vitest";
import { calibrationFor, MINILM_CALIBRATION, relevance, USE_LITE_CALIBRATION } from "./relevance.js";

describe("relevance", () => {
  it("is a probability that grows with the cosine and the BM25 score", () => {
    const low = relevance(MINILM_CALIBRATION, 0.1, 0);
    const mid = relevance(MINILM_CALIBRATION, 0.5, 0);
    const high = relevance(MINILM_CALIBRATION, 0.5, 20);
    expect(low).toBeGreaterThan(0);
    expect(low).toBeLessThan(mid);
    expect(mid).toBeLessThan(high);
    expect(high).toBeLessThan(1);
    expect(relevance(MINILM_CALIBRATION, 0.5, -3)).toBe(relevance(MINILM_CALIBRATION, 0.5, 0));
  });

  it("uses the calibration fitted for the embedder's model", () => {
    expect(calibrationFor("use-lite-en@0.2.0")).toBe(USE_LITE_CALIBRATION);
    expect(calibrationFor("minilm-l6-v2@0.1.0")).toBe(MINILM_CALIBRATION);
    expect(calibrationFor("openai:text-embedding-3-small")).toBe(MINILM_CALIBRATION);
  });
});
