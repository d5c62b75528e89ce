import { describe, expect, it } from "vitest";
import {
  type CountedWindow,
  derivedSkillName,
  selectCandidateWindows,
  sequenceHash,
  sequenceOverlap,
  sessionWindows,
  shapeOf,
} from "./sequence.js";

const step = (tool: string, args: unknown) => ({ tool, shape: shapeOf(args) });

describe("pattern hashing", () => {
  it("takes keys and JSON types, never values", () => {
    expect(shapeOf({ b: 1, a: "x", c: { z: true, y: null }, d: [1, 2] })).toBe("{a:string,b:number,c:{y:null,z:boolean},d:array}");
    const one = [step("geo", { city: "Oslo" }), step("weather", { lat: 59.9, days: 3 }), step("mail", { to: "a@b", body: "hi" })];
    const two = [step("geo", { city: "Lima" }), step("weather", { days: 7, lat: -12 }), step("mail", { body: "x", to: "c@d" })];
    expect(sequenceHash(one)).toBe(sequenceHash(two));
    expect(sequenceHash(one)).not.toBe(sequenceHash([...one.slice(0, 2), step("mail", { to: "a@b" })]));
  });

  it("counts each window of 3..max calls once per session", () => {
    const steps = ["a", "b", "c", "a", "b", "c"].map((t) => step(t, {}));
    const windows = sessionWindows(steps, 3, 4);
    // 3-windows: abc, bca, cab (abc repeats); 4-windows: abca, bcab, cabc.
    expect(windows).toHaveLength(6);
    expect(sessionWindows(steps.slice(0, 2), 3, 6)).toEqual([]);
  });
});

describe("which windows become candidates", () => {
  const w = (start: number, length: number, sessions: number): CountedWindow => ({ hash: `${start}-${length}`, start, length, sessions });

  it("keeps the longest closed window and drops what it explains or overlaps", () => {
    const chosen = selectCandidateWindows([w(0, 3, 3), w(1, 3, 3), w(0, 4, 3), w(5, 3, 2)], 3, 5);
    expect(chosen.map((c) => c.hash)).toEqual(["0-4"]);
  });

  it("keeps a shorter window seen in more sessions than the longer one, if it does not overlap it", () => {
    const chosen = selectCandidateWindows([w(0, 3, 5), w(0, 4, 3), w(6, 3, 4)], 3, 5);
    expect(chosen.map((c) => c.hash)).toEqual(["0-4", "6-3"]);
  });

  it("caps new candidates per session", () => {
    const many = Array.from({ length: 20 }, (_, i) => w(i * 3, 3, 3));
    expect(selectCandidateWindows(many, 3, 5)).toHaveLength(5);
  });
});

describe("overlap", () => {
  it("is the longest common subsequence of tool names over the longer length", () => {
    expect(sequenceOverlap(["a", "b", "c", "d", "e"], ["a", "b", "c", "d", "f"])).toBeCloseTo(0.8);
    expect(sequenceOverlap(["a", "b", "c", "d"], ["a", "b", "c", "d", "e"])).toBeCloseTo(0.8);
    expect(sequenceOverlap(["a", "b", "c"], ["x", "y", "z"])).toBe(0);
    expect(sequenceOverlap(["a", "b", "c"], ["c", "b", "a"])).toBeCloseTo(1 / 3);
  });

  it("names skills within 64 characters", () => {
    const name = derivedSkillName(
      Array.from({ length: 10 }, (_, i) => step(`a_rather_long_tool_name_${i}`, {})),
      "0123456789abcdef",
    );
    expect(name.length).toBeLessThanOrEqual(64);
    expect(name).toMatch(/^auto_a_rather.*_01234567$/);
  });
});
