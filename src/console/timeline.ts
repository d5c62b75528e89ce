import type { DailyOutcome } from "../control/index.js";

const DAY_MS = 86_400_000;

/** The series the timeline chart draws (x in Unix seconds, as uPlot wants; rates in percent, null on days without invocations). */
export interface TimelineChart {
  readonly days: number[];
  readonly overall: Array<number | null>;
  readonly invocations: number[];
  readonly perVersion: Array<{ version: number; rates: Array<number | null> }>;
  /** Versions committed inside the range: where the chart draws a marker. */
  readonly versions: Array<{ version: number; at: number }>;
}

/**
 * Lays the per-day, per-version counts on a continuous axis of `dayCount` UTC days from `since`
 * (docs/console.md#health-timeline): a day with no invocation is a gap, not a zero.
 */
export function timelineChart(
  since: Date,
  dayCount: number,
  rows: readonly DailyOutcome[],
  versions: ReadonlyArray<{ version: number; createdAt: Date }>,
): TimelineChart {
  const start = Math.floor(since.getTime() / DAY_MS) * DAY_MS;
  const days = Array.from({ length: dayCount }, (_, i) => (start + i * DAY_MS) / 1000);
  const totals = days.map(() => ({ invocations: 0, successes: 0 }));
  const byVersion = new Map<number, Array<number | null>>();
  for (const row of rows) {
    const index = Math.round((row.day.getTime() - start) / DAY_MS);
    const total = totals[index];
    if (!total) continue;
    total.invocations += row.invocations;
    total.successes += row.successes;
    const rates = byVersion.get(row.version) ?? days.map(() => null);
    rates[index] = rate(row.successes, row.invocations);
    byVersion.set(row.version, rates);
  }
  return {
    days,
    overall: totals.map((t) => (t.invocations === 0 ? null : rate(t.successes, t.invocations))),
    invocations: totals.map((t) => t.invocations),
    perVersion: [...byVersion].sort(([a], [b]) => a - b).map(([version, rates]) => ({ version, rates })),
    versions: versions
      .filter((v) => v.createdAt.getTime() >= start)
      .map((v) => ({ version: v.version, at: Math.floor(v.createdAt.getTime() / 1000) })),
  };
}

function rate(successes: number, invocations: number): number {
  return Math.round((successes / invocations) * 1000) / 10;
}
