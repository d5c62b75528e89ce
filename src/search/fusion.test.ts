import { describe, expect, it } from "vitest";
import { reciprocalRankFusion } from "./fusion.js";

describe("reciprocalRankFusion", () => {
  it("fuses a worked example with k = 60", () => {
    const fused = reciprocalRankFusion([
      {
        source: "vector",
        items: [
          { id: "a", score: 0.9 },
          { id: "b", score: 0.8 },
          { id: "c", score: 0.7 },
        ],
      },
      {
        source: "keyword",
        items: [
          { id: "c", score: 12 },
          { id: "a", score: 9 },
          { id: "d", score: 3 },
        ],
      },
    ]);
    // a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62, d: 1/63
    expect(fused.map((item) => item.id)).toEqual(["a", "c", "b", "d"]);
    expect(fused[0]?.score).toBeCloseTo(1 / 61 + 1 / 62, 12);
    expect(fused[1]?.score).toBeCloseTo(1 / 63 + 1 / 61, 12);
    expect(fused[2]?.score).toBeCloseTo(1 / 62, 12);
    expect(fused[0]).toMatchObject({ ranks: { vector: 1, keyword: 2 }, scores: { vector: 0.9, keyword: 9 } });
    expect(fused[3]).toMatchObject({ ranks: { keyword: 3 }, scores: { keyword: 3 } });
  });

  it("applies weights per list and honours k and limit", () => {
    const lists = [
      { source: "vector", items: [{ id: "v" }, { id: "k" }] },
      { source: "keyword", items: [{ id: "k" }, { id: "v" }], weight: 3 },
    ];
    expect(reciprocalRankFusion(lists).map((item) => item.id)).toEqual(["k", "v"]);
    const fused = reciprocalRankFusion(lists, { k: 0, limit: 1 });
    expect(fused).toHaveLength(1);
    expect(fused[0]?.score).toBeCloseTo(3 / 1 + 1 / 2, 12);
  });

  it("breaks ties by best rank, then by first appearance, and counts a duplicate once", () => {
    const fused = reciprocalRankFusion([
      { source: "x", items: [{ id: "p" }, { id: "q" }, { id: "p" }] },
      { source: "y", items: [{ id: "q" }, { id: "p" }] },
    ]);
    // p and q both score 1/61 + 1/62 and both have a rank 1: p was seen first.
    expect(fused.map((item) => item.id)).toEqual(["p", "q"]);
    expect(fused[0]?.ranks).toEqual({ x: 1, y: 2 });
  });

  it("fuses nothing into nothing", () => {
    expect(reciprocalRankFusion([])).toEqual([]);
    expect(reciprocalRankFusion([{ source: "x", items: [] }])).toEqual([]);
  });
});
