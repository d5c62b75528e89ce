/**
 * Outcomes reported beside the exit code (docs/learning.md#outcomes), written to
 * `invocation_outcomes`: an agent's verdict on one invocation, implicit signals from recorded
 * sessions, and the learning mirror's copy of both. How they weigh in the window is
 * outcome-signals.ts's and outcome-trust.ts's rule; each write re-judges the skill's health.
 */
import type Database from "better-sqlite3";
import { InternalError, SkillNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import type { InvocationLog } from "./invocation-log.js";
import { type OutcomeRecord, type OutcomeSource, readOutcomes, readOwnReports, restoreOutcomes } from "./outcome-signals.js";
import type { OutcomeReporter } from "./outcome-trust.js";
import type { SkillRecord } from "./records.js";
import type { HealthPolicy, WindowStats } from "./skill-health.js";
import type { SkillRows } from "./skill-rows.js";
import type { StatusRows } from "./skill-status.js";

/** A skill's last judged outcome: where it came from, its verdict, when, and who reported it (empty for an exit code). */
export interface LastOutcome {
  readonly source: OutcomeSource;
  readonly success: boolean;
  readonly at: Date;
  readonly reporter: string;
}

/** An implicit signal from a recorded session, with its weight. */
export interface OutcomeSignal {
  readonly name: string;
  readonly source: Exclude<OutcomeSource, "exit_code" | "explicit">;
  readonly success: boolean;
  readonly weight: number;
  readonly note: string;
  readonly reporter: OutcomeReporter;
  readonly at: Date;
}

export class ReportedOutcomes {
  constructor(
    private readonly db: Database.Database,
    private readonly policy: HealthPolicy,
    private readonly rows: SkillRows,
    private readonly status: StatusRows,
    private readonly log: InvocationLog,
  ) {}

  /** Replaces an earlier explicit verdict on the same invocation. */
  recordExplicit(invocationId: number, success: boolean, note: string, reporter: OutcomeReporter, at: Date): SkillRecord {
    return withSqlite("registry", "record an outcome", () =>
      this.db.transaction(() => {
        const invocation = this.log.invocation(invocationId);
        if (!invocation) throw new InternalError(`invocation ${invocationId} vanished`);
        const trusted = this.trusts(invocation.name, reporter);
        this.db
          .prepare(
            `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at, trusted)
             VALUES (?, ?, ?, 'explicit', ?, 1.0, ?, ?, ?, ?)
             ON CONFLICT (invocation_id) WHERE source = 'explicit' DO UPDATE SET
               success = excluded.success, note = excluded.note, caller = excluded.caller, at = excluded.at, trusted = excluded.trusted`,
          )
          .run(invocation.name, invocation.version, invocationId, success ? 1 : 0, note, reporter.agentId, at.getTime(), trusted ? 1 : 0);
        if (trusted) this.recountStreak(invocation.name);
        return this.status.reevaluate(invocation.name, at);
      })(),
    );
  }

  /**
   * `failure_count` again from the active version's invocations since the streak last started over,
   * newest first, each judged by its trusted explicit verdict when it has one, else by its exit code:
   * the failures before the first success (docs/learning.md#outcomes-and-the-streak). Call inside a transaction.
   */
  private recountStreak(name: string): void {
    const runs = this.db
      .prepare<[string], { ran: number; verdict: number | null }>(
        `SELECT i.success AS ran, o.success AS verdict
         FROM skills s
         JOIN invocations i ON i.skill_name = s.name AND i.version = s.version AND i.invoked_at >= s.streak_since
         LEFT JOIN invocation_outcomes o ON o.invocation_id = i.id AND o.source = 'explicit' AND o.trusted = 1
         WHERE s.name = ?
         ORDER BY i.id DESC`,
      )
      .iterate(name);
    let failures = 0;
    for (const run of runs) {
      if ((run.verdict ?? run.ran) === 1) break;
      failures++;
    }
    this.db.prepare("UPDATE skills SET failure_count = ? WHERE name = ?").run(failures, name);
  }

  /**
   * The skill's last judged outcome (GetSkillStats.last_outcome): its latest invocation's exit code, or
   * a trusted report (explicit verdict or implicit signal) made after it; undefined before any.
   */
  lastOutcome(name: string): LastOutcome | undefined {
    return withSqlite("registry", "read the last outcome", () => {
      const run = this.db
        .prepare<[string], { success: number; at: number }>(
          "SELECT success, invoked_at AS at FROM invocations WHERE skill_name = ? ORDER BY id DESC LIMIT 1",
        )
        .get(name);
      const report = this.db
        .prepare<[string], { source: string; success: number; at: number; caller: string }>(
          `SELECT source, success, at, caller FROM invocation_outcomes
           WHERE skill_name = ? AND trusted = 1 ORDER BY at DESC, rowid DESC LIMIT 1`,
        )
        .get(name);
      if (report && (!run || report.at >= run.at)) {
        return { source: report.source as OutcomeSource, success: report.success === 1, at: new Date(report.at), reporter: report.caller };
      }
      return run ? { source: "exit_code", success: run.success === 1, at: new Date(run.at), reporter: "" } : undefined;
    });
  }

  /** The skill's owner and admins are trusted reporters (docs/learning.md#whose-reports-count); call inside a transaction. */
  private trusts(name: string, reporter: OutcomeReporter): boolean {
    if (reporter.admin) return true;
    const skill = this.rows.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return skill.owner === reporter.agentId;
  }

  /** A sample of the active version that belongs to no invocation. */
  recordSignal({ name, source, success, weight, note, reporter, at }: OutcomeSignal): SkillRecord {
    return withSqlite("registry", "record an outcome signal", () =>
      this.db.transaction(() => {
        const current = this.rows.get(name);
        if (!current) throw new SkillNotFoundError(name);
        const trusted = reporter.admin || current.owner === reporter.agentId;
        this.db
          .prepare(
            `INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at, trusted)
             VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(name, current.version, source, success ? 1 : 0, weight, note, reporter.agentId, at.getTime(), trusted ? 1 : 0);
        return this.status.reevaluate(name, at);
      })(),
    );
  }

  ownReports(reporter: string): Map<string, WindowStats> {
    return withSqlite("registry", "read an agent's own reports", () => readOwnReports(this.db, reporter, this.policy.windowSize));
  }

  all(): OutcomeRecord[] {
    return withSqlite("registry", "read outcomes", () => readOutcomes(this.db));
  }

  /** Only into an empty table, and only outcomes of skills the registry has; each such skill is re-judged. */
  restore(records: readonly OutcomeRecord[]): number {
    return withSqlite("registry", "restore outcomes", () =>
      this.db.transaction(() => {
        if (this.db.prepare("SELECT 1 FROM invocation_outcomes LIMIT 1").get() !== undefined) return 0;
        restoreOutcomes(
          this.db,
          records.filter((r) => this.rows.get(r.skillName) !== undefined),
        );
        for (const name of new Set(records.map((r) => r.skillName))) if (this.rows.get(name)) this.status.reevaluate(name, new Date());
        return records.length;
      })(),
    );
  }
}
