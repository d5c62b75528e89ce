import { describe, expect, it } from "vitest";
import { jsonDepth } from "./json-depth.js";

describe("jsonDepth", () => {
  it("counts levels of arrays and objects, scalars being 0", () => {
    expect(jsonDepth(3, 10)).toBe(0);
    expect(jsonDepth({}, 10)).toBe(1);
    expect(jsonDepth({ a: [1, { b: [] }] }, 10)).toBe(4);
  });

  it("stops one level past the limit, without recursion, on a value nested far deeper than any stack", () => {
    const depth = 200_000;
    const deep = JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
    expect(jsonDepth(deep, 128)).toBe(129);
  });
});
