import { describe, expect, it } from "vitest";
import { implicitFailures } from "./implicit-outcomes.js";

describe("implicit failure signals", () => {
  const skills = new Set(["geo"]);

  it("counts a skill call followed at once by another tool on exactly the same values", () => {
    const calls = [
      { tool: "geo", args: { city: "Oslo" } },
      { tool: "web_search", args: { q: "Oslo" } },
    ];
    expect(implicitFailures(calls, skills)).toEqual([{ skill: "geo", index: 0, retriedWith: "web_search" }]);
  });

  it("ignores pipelines, extra values, the same tool again and tools that are not skills", () => {
    expect(
      implicitFailures(
        [
          { tool: "geo", args: { city: "Oslo" } },
          { tool: "weather", args: { lat: 59.9 } },
        ],
        skills,
      ),
    ).toEqual([]);
    expect(
      implicitFailures(
        [
          { tool: "geo", args: { city: "Oslo" } },
          { tool: "x", args: { q: "Oslo", n: 3 } },
        ],
        skills,
      ),
    ).toEqual([]);
    expect(
      implicitFailures(
        [
          { tool: "geo", args: { city: "Oslo" } },
          { tool: "geo", args: { city: "Oslo" } },
        ],
        skills,
      ),
    ).toEqual([]);
    expect(
      implicitFailures(
        [
          { tool: "grep", args: { q: "a" } },
          { tool: "find", args: { q: "a" } },
        ],
        skills,
      ),
    ).toEqual([]);
    expect(
      implicitFailures(
        [
          { tool: "geo", args: {} },
          { tool: "x", args: {} },
        ],
        skills,
      ),
    ).toEqual([]);
  });
});
