/**
 * Outcomes beyond the exit code (docs/learning.md#outcomes), part of telemetry: an agent's explicit
 * verdict on one invocation overrides the exit code's in the rolling window; implicit signals from
 * recorded sessions are samples of their own with a lower weight; whose verdicts count, and how
 * much, is outcome-trust.ts's rule (docs/learning.md#whose-reports-count). The table
 * (`invocation_outcomes`, beside `invocations` in registry.db) is in the registry's migrations list.
 */
import type Database from "better-sqlite3";
import { judgeWindow, type WindowCandidate } from "./outcome-trust.js";
import type { HealthPolicy, WindowStats } from "./skill-health.js";

/** Where a window sample's verdict comes from. */
export const OUTCOME_SOURCES = ["exit_code", "explicit", "implicit"] as const;
export type OutcomeSource = (typeof OUTCOME_SOURCES)[number];

/** Samples and (weighted) successes of one source in the window. */
export interface SourceWindow {
  readonly source: OutcomeSource;
  readonly samples: number;
  readonly successes: number;
  /** The mean weight of this source's samples in the window's rate (0 without samples). */
  readonly weight: number;
}

interface InvocationRow {
  at: number;
  tie: number;
  engine: number;
  reported: number | null;
  caller: string | null;
  trusted: number | null;
}

interface StandaloneRow {
  at: number;
  tie: number;
  source: string;
  success: number;
  weight: number;
  caller: string;
  trusted: number;
}

/**
 * The last `windowSize` samples of a version: its invocations (an explicit outcome replacing the
 * exit code's verdict) and the samples that belong to no invocation (implicit signals; outcomes
 * restored from the mirror, whose invocations a rebuild does not keep), newest first, weighed by
 * whose they are (outcome-trust.ts). `successes` is weighted and `weight` is the sum of the
 * weights, so the rate is successes / weight.
 */
export function readWindow(
  db: Database.Database,
  name: string,
  version: number,
  policy: Pick<HealthPolicy, "windowSize" | "reportQuorum">,
): WindowStats & { readonly weight: number; readonly bySource: SourceWindow[] } {
  const size = policy.windowSize;
  const invocations = db
    .prepare<[string, number, number], InvocationRow>(
      `SELECT i.invoked_at AS at, i.id AS tie, i.success AS engine, o.success AS reported, o.caller AS caller, o.trusted AS trusted
       FROM invocations i LEFT JOIN invocation_outcomes o ON o.invocation_id = i.id AND o.source = 'explicit'
       WHERE i.skill_name = ? AND i.version = ? ORDER BY i.id DESC LIMIT ?`,
    )
    .all(name, version, size);
  // The newest of each kind that the rule may keep or drop apart: trusted reports, and untrusted
  // successes and failures (invocation_outcomes_by_trust), so the window fills whichever count.
  const standaloneOf = (kind: string): string =>
    `SELECT * FROM (SELECT at, id AS tie, source, success, weight, caller, trusted FROM invocation_outcomes
                    WHERE skill_name = @name AND version = @version AND invocation_id IS NULL AND ${kind}
                    ORDER BY at DESC, id DESC LIMIT @size)`;
  const standalone = db
    .prepare<[{ name: string; version: number; size: number }], StandaloneRow>(
      [standaloneOf("trusted = 1"), standaloneOf("trusted = 0 AND success = 1"), standaloneOf("trusted = 0 AND success = 0")].join(
        " UNION ALL ",
      ),
    )
    .all({ name, version, size });
  const candidates: WindowCandidate[] = [
    ...invocations.map((row) => ({
      at: row.at,
      tie: row.tie,
      engine: row.engine === 1,
      report:
        row.reported === null
          ? undefined
          : { source: "explicit" as const, success: row.reported === 1, weight: 1, reporter: row.caller ?? "", trusted: row.trusted === 1 },
    })),
    ...standalone.map((row) => ({
      at: row.at,
      tie: row.tie,
      engine: undefined,
      report: {
        source: row.source === "explicit" ? ("explicit" as const) : ("implicit" as const),
        success: row.success === 1,
        weight: row.weight,
        reporter: row.caller,
        trusted: row.trusted === 1,
      },
    })),
  ];
  const samples = judgeWindow(candidates, size, policy.reportQuorum);
  const bySource = new Map<OutcomeSource, { samples: number; successes: number; weight: number }>(
    OUTCOME_SOURCES.map((s) => [s, { samples: 0, successes: 0, weight: 0 }]),
  );
  let successes = 0;
  let weight = 0;
  for (const sample of samples) {
    const entry = bySource.get(sample.source);
    if (!entry) continue;
    entry.samples += 1;
    entry.successes += sample.success ? 1 : 0;
    entry.weight += sample.weight;
    successes += sample.success ? sample.weight : 0;
    weight += sample.weight;
  }
  return {
    samples: samples.length,
    successes,
    weight,
    bySource: OUTCOME_SOURCES.map((source) => {
      const entry = bySource.get(source) as { samples: number; successes: number; weight: number };
      return { source, samples: entry.samples, successes: entry.successes, weight: entry.samples === 0 ? 0 : entry.weight / entry.samples };
    }),
  };
}

/**
 * One agent's own reports (explicit and implicit) on the active version of every skill it reported
 * on, its newest `windowSize` a skill, weighted: what its own routes follow
 * (docs/learning.md#your-own-routes).
 */
export function readOwnReports(db: Database.Database, reporter: string, windowSize: number): Map<string, WindowStats> {
  const rows = db
    .prepare<[string, number], { skill_name: string; success: number; weight: number }>(
      `SELECT skill_name, success, weight FROM (
         SELECT o.skill_name, o.success, o.weight,
                ROW_NUMBER() OVER (PARTITION BY o.skill_name ORDER BY o.at DESC, o.id DESC) AS n
         FROM invocation_outcomes o JOIN skills s ON s.name = o.skill_name AND s.version = o.version
         WHERE o.caller = ?)
       WHERE n <= ?`,
    )
    .all(reporter, windowSize);
  const own = new Map<string, { samples: number; successes: number; weight: number }>();
  for (const row of rows) {
    const entry = own.get(row.skill_name) ?? { samples: 0, successes: 0, weight: 0 };
    entry.samples += 1;
    entry.successes += row.success * row.weight;
    entry.weight += row.weight;
    own.set(row.skill_name, entry);
  }
  return own;
}

/** One row of `invocation_outcomes`, as the mirror keeps it. */
export interface OutcomeRecord {
  readonly skillName: string;
  readonly version: number;
  readonly source: "explicit" | "implicit";
  readonly success: boolean;
  readonly weight: number;
  readonly note: string;
  readonly caller: string;
  readonly at: number;
  /**
   * Reported by the skill's owner or an admin (docs/learning.md#whose-reports-count). Absent in a
   * mirror from before the rule: restored as trusted when the reporter owns the skill.
   */
  readonly trusted?: boolean;
}

export function readOutcomes(db: Database.Database): OutcomeRecord[] {
  return db
    .prepare<
      [],
      {
        skill_name: string;
        version: number;
        source: string;
        success: number;
        weight: number;
        note: string;
        caller: string;
        at: number;
        trusted: number;
      }
    >("SELECT skill_name, version, source, success, weight, note, caller, at, trusted FROM invocation_outcomes ORDER BY id")
    .all()
    .map((row) => ({
      skillName: row.skill_name,
      version: row.version,
      source: row.source === "explicit" ? "explicit" : "implicit",
      success: row.success === 1,
      weight: row.weight,
      note: row.note,
      caller: row.caller,
      at: row.at,
      trusted: row.trusted === 1,
    }));
}

/** Restores mirrored outcomes as samples of no invocation (a rebuild keeps no invocation history). */
export function restoreOutcomes(db: Database.Database, records: readonly OutcomeRecord[]): void {
  const insert = db.prepare(
    `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at, trusted)
     VALUES (@skillName, @version, NULL, @source, @success, @weight, @note, @caller, @at,
             COALESCE(@trusted, (SELECT s.owner = @caller FROM skills s WHERE s.name = @skillName), 0))`,
  );
  for (const r of records) {
    insert.run({
      skillName: r.skillName,
      version: r.version,
      source: r.source,
      success: r.success ? 1 : 0,
      weight: r.weight,
      note: r.note,
      caller: r.caller,
      at: r.at,
      trusted: r.trusted === undefined ? null : r.trusted ? 1 : 0,
    });
  }
}
