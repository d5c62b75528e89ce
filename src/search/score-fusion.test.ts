import { describe, expect, it } from "vitest";
import { normalizedScoreFusion } from "./score-fusion.js";

describe("normalizedScoreFusion", () => {
  it("min-max normalises each list and adds the weighted scores", () => {
    const fused = normalizedScoreFusion([
      {
        source: "keywords",
        weight: 0.3,
        items: [
          { id: "a", score: 12 },
          { id: "b", score: 6 },
          { id: "c", score: 2 },
        ],
      },
      {
        source: "vectors",
        weight: 0.7,
        items: [
          { id: "b", score: 0.8 },
          { id: "c", score: 0.6 },
          { id: "a", score: 0.4 },
        ],
      },
    ]);
    expect(fused.map((f) => f.id)).toEqual(["b", "c", "a"]);
    expect(fused[0]?.score).toBeCloseTo(0.3 * 0.4 + 0.7 * 1, 10);
    expect(fused[2]?.score).toBeCloseTo(0.3, 10);
    expect(fused[0]?.ranks).toEqual({ keywords: 2, vectors: 1 });
    expect(fused[0]?.scores).toEqual({ keywords: 6, vectors: 0.8 });
  });

  it("keeps the distance between candidates that rank fusion throws away", () => {
    // The vector source is far more sure of x than of anything else; keywords mildly prefer y.
    const lists = [
      {
        source: "keywords",
        weight: 0.3,
        items: [
          { id: "y", score: 5 },
          { id: "x", score: 4.8 },
          { id: "z", score: 1 },
        ],
      },
      {
        source: "vectors",
        weight: 0.7,
        items: [
          { id: "x", score: 0.9 },
          { id: "y", score: 0.3 },
          { id: "z", score: 0.29 },
        ],
      },
    ];
    expect(normalizedScoreFusion(lists)[0]?.id).toBe("x");
  });

  it("counts an item a list did not return as 0 there, a list of equal scores as 1, a repeated id once", () => {
    const fused = normalizedScoreFusion([
      {
        source: "keywords",
        items: [
          { id: "a", score: 3 },
          { id: "a", score: 1 },
        ],
      },
      { source: "vectors", items: [{ id: "b", score: 0.5 }] },
    ]);
    expect(fused.map((f) => [f.id, f.score])).toEqual([
      ["a", 1],
      ["b", 1],
    ]);
    expect(normalizedScoreFusion([{ source: "k", items: [] }])).toEqual([]);
    expect(() => normalizedScoreFusion([{ source: "k", items: [{ id: "a" }] }])).toThrow(/finite score/);
  });

  it("cuts to the limit", () => {
    const items = [1, 2, 3].map((n) => ({ id: `s${n}`, score: n }));
    expect(normalizedScoreFusion([{ source: "k", items }], { limit: 2 })).toHaveLength(2);
  });
});
