import { describe, expect, it } from "vitest";
import { CLAUSE_MIN_RELEVANCE, mergeClauses, type Ranking } from "./ranking-merge.js";

/** A ranking of the given ids, best first, each with the given relevance. */
function ranking(entries: ReadonlyArray<readonly [string, number | undefined]>): Ranking {
  return {
    items: entries.map(([id, relevance], i) => ({ id, score: 1 - i / 10, ranks: {}, scores: {}, relevance })),
  };
}

describe("mergeClauses", () => {
  const whole = ranking([
    ["ocr", 0.6],
    ["translate", 0.4],
    ["summarize", 0.3],
    ["classify", 0.2],
  ]);

  it("places a clause that fits a skill on its own right after the whole query's best", () => {
    const ask = ranking([
      ["speech", 0.7],
      ["audio", 0.5],
    ]);
    expect(mergeClauses(whole, [ask]).items.map((i) => i.id)).toEqual(["ocr", "speech", "audio", "translate", "summarize", "classify"]);
  });

  it("places a clause of context, whose best is below the clause floor, after the whole query's best two", () => {
    // "I've received a document as an image named 'example.jpg'." ahead of the ask: its own best
    // fits nothing, and its picks used to push the whole query's second best out of the top 3.
    const context = ranking([
      ["image_editing", CLAUSE_MIN_RELEVANCE / 2],
      ["colorizer", CLAUSE_MIN_RELEVANCE / 3],
    ]);
    expect(mergeClauses(whole, [context]).items.map((i) => i.id)).toEqual([
      "ocr",
      "translate",
      "image_editing",
      "colorizer",
      "summarize",
      "classify",
    ]);
  });

  it("keeps every item's best relevance over all rankings, and treats unknown relevance as fitting", () => {
    const unknown = ranking([["speech", undefined]]);
    expect(mergeClauses(whole, [unknown]).items.map((i) => i.id)).toEqual(["ocr", "speech", "translate", "summarize", "classify"]);
    const better = ranking([["classify", 0.9]]);
    const merged = mergeClauses(whole, [better]).items;
    expect(merged.map((i) => i.id)).toEqual(["ocr", "classify", "translate", "summarize"]);
    expect(merged.find((i) => i.id === "classify")?.relevance).toBe(0.9);
  });
});
