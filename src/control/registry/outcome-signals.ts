/**
 * Outcomes beyond the exit code (docs/learning.md#outcomes), part of telemetry: an agent's explicit
 * verdict on one invocation overrides the exit code's in the rolling window; implicit signals from
 * recorded sessions are samples of their own with a lower weight. The table lives in registry.db
 * beside `invocations`, created here so the schema's migrations stay untouched.
 */
import type Database from "better-sqlite3";
import type { WindowStats } from "./skill-health.js";

/** Where a window sample's verdict comes from. */
export const OUTCOME_SOURCES = ["exit_code", "explicit", "implicit"] as const;
export type OutcomeSource = (typeof OUTCOME_SOURCES)[number];

/** Samples and (weighted) successes of one source in the window. */
export interface SourceWindow {
  readonly source: OutcomeSource;
  readonly samples: number;
  readonly successes: number;
  readonly weight: number;
}

export function ensureOutcomeTable(db: Database.Database): void {
  db.exec(`CREATE TABLE IF NOT EXISTS invocation_outcomes (
             id INTEGER PRIMARY KEY,
             skill_name TEXT NOT NULL,
             version INTEGER NOT NULL,
             invocation_id INTEGER,
             source TEXT NOT NULL CHECK (source IN ('explicit', 'implicit')),
             success INTEGER NOT NULL,
             weight REAL NOT NULL,
             note TEXT NOT NULL DEFAULT '',
             caller TEXT NOT NULL,
             at INTEGER NOT NULL
           ) STRICT;
           CREATE UNIQUE INDEX IF NOT EXISTS invocation_outcomes_explicit ON invocation_outcomes (invocation_id) WHERE source = 'explicit';
           CREATE INDEX IF NOT EXISTS invocation_outcomes_standalone ON invocation_outcomes (skill_name, version, at) WHERE invocation_id IS NULL;`);
}

interface SampleRow {
  source: OutcomeSource;
  success: number;
  weight: number;
}

/**
 * The last `size` samples of a version: its invocations (an explicit outcome replacing the exit
 * code's verdict) and the samples that belong to no invocation (implicit signals; outcomes restored
 * from the mirror, whose invocations a rebuild does not keep), newest first. `successes` is weighted and `weight` is
 * the sum of the weights, so the rate is successes / weight.
 */
export function readWindow(
  db: Database.Database,
  name: string,
  version: number,
  size: number,
): WindowStats & { readonly weight: number; readonly bySource: SourceWindow[] } {
  const rows = db
    .prepare<[string, number, number, string, number, number, number], SampleRow>(
      `SELECT source, success, weight FROM (
         SELECT * FROM (
           SELECT i.invoked_at AS at, i.id AS tie,
                  CASE WHEN o.success IS NULL THEN 'exit_code' ELSE 'explicit' END AS source,
                  COALESCE(o.success, i.success) AS success, 1.0 AS weight
           FROM invocations i LEFT JOIN invocation_outcomes o ON o.invocation_id = i.id AND o.source = 'explicit'
           WHERE i.skill_name = ? AND i.version = ? ORDER BY i.id DESC LIMIT ?)
         UNION ALL
         SELECT * FROM (
           SELECT at, id AS tie, source, success, weight FROM invocation_outcomes
           WHERE skill_name = ? AND version = ? AND invocation_id IS NULL ORDER BY at DESC LIMIT ?)
       ) ORDER BY at DESC, tie DESC LIMIT ?`,
    )
    .all(name, version, size, name, version, size, size);
  const bySource = new Map<OutcomeSource, { samples: number; successes: number; weight: number }>(
    OUTCOME_SOURCES.map((s) => [s, { samples: 0, successes: 0, weight: 0 }]),
  );
  let successes = 0;
  let weight = 0;
  for (const row of rows) {
    const entry = bySource.get(row.source);
    if (!entry) continue;
    entry.samples += 1;
    entry.successes += row.success;
    entry.weight = row.weight;
    successes += row.success * row.weight;
    weight += row.weight;
  }
  return {
    samples: rows.length,
    successes,
    weight,
    bySource: OUTCOME_SOURCES.map((source) => ({
      source,
      ...(bySource.get(source) as { samples: number; successes: number; weight: number }),
    })),
  };
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
}

export function readOutcomes(db: Database.Database): OutcomeRecord[] {
  return db
    .prepare<
      [],
      { skill_name: string; version: number; source: string; success: number; weight: number; note: string; caller: string; at: number }
    >("SELECT skill_name, version, source, success, weight, note, caller, at FROM invocation_outcomes ORDER BY id")
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
    }));
}

/** Restores mirrored outcomes as samples of no invocation (a rebuild keeps no invocation history). */
export function restoreOutcomes(db: Database.Database, records: readonly OutcomeRecord[]): void {
  const insert = db.prepare(
    `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at)
     VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)`,
  );
  for (const r of records) insert.run(r.skillName, r.version, r.source, r.success ? 1 : 0, r.weight, r.note, r.caller, r.at);
}
