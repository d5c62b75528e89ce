import { describe, expect, it } from "vitest";
import { timelineChart } from "./timeline.js";

const day = (n: number) => new Date(Date.UTC(2026, 0, 1 + n));

describe("timelineChart", () => {
  it("puts each day's rate on a continuous axis, per version and overall, with gaps for idle days", () => {
    const chart = timelineChart(
      day(0),
      4,
      [
        { day: day(0), version: 1, invocations: 4, successes: 3 },
        { day: day(2), version: 1, invocations: 2, successes: 0 },
        { day: day(2), version: 2, invocations: 2, successes: 2 },
      ],
      [
        { version: 1, createdAt: new Date(day(-10).getTime()) },
        { version: 2, createdAt: new Date(day(2).getTime() + 3_600_000) },
      ],
    );
    expect(chart.days).toEqual([0, 1, 2, 3].map((n) => day(n).getTime() / 1000));
    expect(chart.overall).toEqual([75, null, 50, null]);
    expect(chart.invocations).toEqual([4, 0, 4, 0]);
    expect(chart.perVersion).toEqual([
      { version: 1, rates: [75, null, 0, null] },
      { version: 2, rates: [null, null, 100, null] },
    ]);
    // Only versions committed inside the range are marked.
    expect(chart.versions).toEqual([{ version: 2, at: day(2).getTime() / 1000 + 3600 }]);
  });
});
