/**
 * The `invocations` table: every invocation's outcome, the counters it moves
 * (docs/skill-lifecycle.md#counters) and the figures read from it (usage, recent outcomes, the
 * console's daily outcomes and durations).
 */
import type Database from "better-sqlite3";
import { withSqlite } from "../../sqlite/index.js";
import type { DailyOutcome, InvocationOutcome, ReturnedFile, SkillRecord, UsageFigures } from "./records.js";
import { type InvocationRow, toInvocation } from "./row-mapping.js";
import type { SkillRows } from "./skill-rows.js";
import type { StatusRows } from "./skill-status.js";
import type { TelemetrySync } from "./telemetry-sync.js";

const RECENT_DURATIONS = 100;
/** Returned files an invocation lists by name and size (docs/console.md#recent-runs); the rest are counted. */
export const RECORDED_FILES = 64;
/** A listed path longer than this is kept cut, with an ellipsis: a row stays small whatever a skill names its files. */
const RECORDED_PATH_CHARS = 256;
/**
 * The end of a failed run's stderr an invocation keeps (docs/console.md#last-error): a traceback's
 * last frames and its exception line fit, and a row stays small whatever a skill writes.
 */
export const RECORDED_STDERR_CHARS = 2048;
const DAY_MS = 24 * 60 * 60 * 1000;

export class InvocationLog {
  constructor(
    private readonly db: Database.Database,
    private readonly rows: SkillRows,
    private readonly status: StatusRows,
    private readonly telemetry: TelemetrySync,
  ) {}

  record(outcome: InvocationOutcome): { skill: SkillRecord | undefined; invocationId: number } {
    const at = outcome.at.getTime();
    if (!this.telemetry.relaxed) return this.recordNow(outcome, at);
    const before = this.rows.get(outcome.name)?.status;
    // A status change (degraded, retired) is a decision others act on: on disk at once.
    return this.telemetry.withoutFsync(
      () => this.recordNow(outcome, at),
      (recorded) => recorded.skill !== undefined && recorded.skill.status !== before,
    );
  }

  private recordNow(outcome: InvocationOutcome, at: number): { skill: SkillRecord | undefined; invocationId: number } {
    const files = outcome.outputFiles ?? [];
    return withSqlite("registry", "record an invocation", () =>
      this.db.transaction(() => {
        const inserted = this.db
          .prepare(
            `INSERT INTO invocations (skill_name, version, invoked_at, success, duration_ms, exit_code,
                                      timed_out, oom_killed, error_summary, caller,
                                      output_files, output_file_count, output_file_bytes, stderr_tail)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(
            outcome.name,
            outcome.version,
            at,
            outcome.success ? 1 : 0,
            outcome.durationMs,
            outcome.exitCode,
            outcome.timedOut ? 1 : 0,
            outcome.oomKilled ? 1 : 0,
            outcome.errorSummary,
            outcome.caller,
            JSON.stringify(files.slice(0, RECORDED_FILES).map(recordedFile)),
            files.length,
            files.reduce((sum, file) => sum + file.sizeBytes, 0),
            outcome.success ? "" : stderrTailOf(outcome.stderrTail ?? ""),
          );
        const counters = outcome.success ? "usage_count = usage_count + 1, failure_count = 0" : "failure_count = failure_count + 1";
        this.db.prepare(`UPDATE skills SET ${counters}, last_invoked_at = ?, updated_at = ? WHERE name = ?`).run(at, at, outcome.name);
        return { skill: this.status.reevaluate(outcome.name, outcome.at), invocationId: Number(inserted.lastInsertRowid) };
      })(),
    );
  }

  invocation(id: number): (InvocationOutcome & { readonly id: number }) | undefined {
    return this.select("WHERE id = ?", [id])[0];
  }

  /** The newest failed invocation of `name`; with `caller`, that agent's newest failed one. */
  lastFailure(name: string, caller?: string): (InvocationOutcome & { readonly id: number }) | undefined {
    if (caller !== undefined) {
      return this.select("WHERE skill_name = ? AND caller = ? AND success = 0 ORDER BY id DESC LIMIT 1", [name, caller])[0];
    }
    return this.select("WHERE skill_name = ? AND success = 0 ORDER BY id DESC LIMIT 1", [name])[0];
  }

  /** Newest first; with `caller`, only that agent's (invocations_by_caller). */
  invocations(name: string, limit: number, caller?: string): (InvocationOutcome & { readonly id: number })[] {
    if (caller !== undefined) return this.select("WHERE skill_name = ? AND caller = ? ORDER BY id DESC LIMIT ?", [name, caller, limit]);
    return this.select("WHERE skill_name = ? ORDER BY id DESC LIMIT ?", [name, limit]);
  }

  private select(where: string, params: (string | number)[]): (InvocationOutcome & { readonly id: number })[] {
    return withSqlite("registry", "read invocations", () =>
      this.db
        .prepare<(string | number)[], InvocationRow>(`SELECT * FROM invocations ${where}`)
        .all(...params)
        .map(toInvocation),
    );
  }

  usage(name: string, version: number, now: Date): UsageFigures {
    return withSqlite("registry", "read usage figures", () => {
      const totals = this.db
        .prepare<[number, string], { total: number; successes: number | null; recent: number | null }>(
          `SELECT COUNT(*) AS total, SUM(success) AS successes, SUM(invoked_at >= ?) AS recent
           FROM invocations WHERE skill_name = ?`,
        )
        .get(now.getTime() - 7 * DAY_MS, name);
      const durations = this.db
        .prepare<[string, number, number], { duration_ms: number }>(
          "SELECT duration_ms FROM invocations WHERE skill_name = ? AND version = ? ORDER BY id DESC LIMIT ?",
        )
        .all(name, version, RECENT_DURATIONS)
        .map((r) => r.duration_ms);
      return {
        invocationsLast7Days: totals?.recent ?? 0,
        totalInvocations: totals?.total ?? 0,
        totalSuccesses: totals?.successes ?? 0,
        recentDurationsMs: durations,
        window: this.status.window(name, version),
      };
    });
  }

  /** One indexed query per key (invocations_by_skill), so a page of skills costs a page of lookups. */
  recentOutcomes(keys: readonly { name: string; version: number }[], limit: number): Map<string, boolean[]> {
    return withSqlite("registry", "read recent outcomes", () => {
      const statement = this.db.prepare<[string, number, number], { success: number }>(
        "SELECT success FROM invocations WHERE skill_name = ? AND version = ? ORDER BY id DESC LIMIT ?",
      );
      const outcomes = new Map<string, boolean[]>();
      for (const key of keys) {
        outcomes.set(
          key.name,
          statement
            .all(key.name, key.version, limit)
            .map((row) => row.success === 1)
            .reverse(),
        );
      }
      return outcomes;
    });
  }

  /** Derived from the invocation rows: the registry keeps every invocation, so no per-day table is needed. */
  dailyOutcomes(name: string, since: Date): DailyOutcome[] {
    return withSqlite("registry", "read daily outcomes", () =>
      this.db
        // Integer division in SQL: a bound JS number would arrive as a REAL and split no days.
        .prepare<[string, number], { day: number; version: number; invocations: number; successes: number }>(
          `SELECT invoked_at / ${DAY_MS} AS day, version, COUNT(*) AS invocations, SUM(success) AS successes
           FROM invocations WHERE skill_name = ? AND invoked_at >= ?
           GROUP BY day, version ORDER BY day, version`,
        )
        .all(name, since.getTime())
        .map((row) => ({
          day: new Date(row.day * DAY_MS),
          version: row.version,
          invocations: row.invocations,
          successes: row.successes,
        })),
    );
  }

  durationsByVersion(name: string, perVersion: number): Map<number, number[]> {
    return withSqlite("registry", "read durations by version", () => {
      const rows = this.db
        .prepare<[string, number], { version: number; duration_ms: number }>(
          `SELECT version, duration_ms FROM (
             SELECT version, duration_ms, ROW_NUMBER() OVER (PARTITION BY version ORDER BY id DESC) AS n
             FROM invocations WHERE skill_name = ?)
           WHERE n <= ? ORDER BY version`,
        )
        .all(name, perVersion);
      const byVersion = new Map<number, number[]>();
      for (const row of rows) {
        const list = byVersion.get(row.version) ?? [];
        list.push(row.duration_ms);
        byVersion.set(row.version, list);
      }
      return byVersion;
    });
  }
}

function recordedFile(file: ReturnedFile): { path: string; size_bytes: number; truncated: boolean } {
  const path = file.path.length <= RECORDED_PATH_CHARS ? file.path : `${file.path.slice(0, RECORDED_PATH_CHARS - 1)}…`;
  return { path, size_bytes: file.sizeBytes, truncated: file.truncated };
}

/** The last RECORDED_STDERR_CHARS characters of `stderr`, from a line's start when one is near, marked `…` when cut. */
function stderrTailOf(stderr: string): string {
  if (stderr.length <= RECORDED_STDERR_CHARS) return stderr;
  let tail = stderr.slice(-RECORDED_STDERR_CHARS);
  // Begin at a whole line when the cut fell inside one (the first lines of a traceback are the least telling).
  const lineStart = tail.indexOf("\n");
  if (lineStart >= 0 && lineStart < RECORDED_STDERR_CHARS / 4) tail = tail.slice(lineStart + 1);
  // Never begin with half of a surrogate pair.
  else if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
  return `…${tail}`;
}
