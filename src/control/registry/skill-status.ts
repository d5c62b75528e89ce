/**
 * A skill's status: the health judgement that follows every change to its counters or its rolling
 * window (the rules are skill-health.ts's; docs/skill-lifecycle.md), and the status changes only an
 * RPC decides (retire, delete, restore, pin).
 */
import type Database from "better-sqlite3";
import { SkillNotFoundError } from "../../errors/index.js";
import { withSqlite } from "../../sqlite/index.js";
import { readWindow, type SourceWindow } from "./outcome-signals.js";
import type { SkillRecord } from "./records.js";
import { evaluateHealth, type HealthPolicy, type SkillStatus, type WindowStats } from "./skill-health.js";
import type { SkillRows } from "./skill-rows.js";

export class StatusRows {
  constructor(
    private readonly db: Database.Database,
    private readonly policy: HealthPolicy,
    private readonly rows: SkillRows,
  ) {}

  window(name: string, version: number): WindowStats & { readonly bySource: SourceWindow[] } {
    return withSqlite("registry", "read the rolling window", () => readWindow(this.db, name, version, this.policy));
  }

  /** Applies the health rules to the stored counters and window; call inside a transaction. */
  reevaluate(name: string, at: Date): SkillRecord {
    const current = this.rows.get(name);
    if (!current) throw new SkillNotFoundError(name);
    const verdict = evaluateHealth(
      {
        status: current.status,
        protected: current.protected,
        failureCount: current.failureCount,
        window: this.window(name, current.version),
      },
      this.policy,
    );
    const changed = verdict.status !== current.status;
    if (!changed && verdict.reason === current.statusReason && verdict.warning === current.healthWarning) return current;
    this.db
      .prepare(
        `UPDATE skills SET status = ?, status_reason = ?, health_warning = ?,
                           status_changed_at = CASE WHEN ? THEN ? ELSE status_changed_at END
         WHERE name = ?`,
      )
      .run(verdict.status, verdict.reason, verdict.warning, changed ? 1 : 0, at.getTime(), name);
    return this.rows.get(name) as SkillRecord;
  }

  /** Retired and deleted are final for the health rules; any other status is re-judged at once. */
  setStatus(name: string, next: SkillStatus, reason: string, at: Date): SkillRecord {
    return withSqlite("registry", "change a skill's status", () =>
      this.db.transaction(() => {
        this.db
          .prepare("UPDATE skills SET status = ?, status_reason = ?, updated_at = ?, status_changed_at = ? WHERE name = ?")
          .run(next, reason, at.getTime(), at.getTime(), name);
        return next === "retired" || next === "deleted" ? (this.rows.get(name) as SkillRecord) : this.reevaluate(name, at);
      })(),
    );
  }

  restore(name: string, reason: string, at: Date): SkillRecord {
    return withSqlite("registry", "restore a skill", () =>
      this.db.transaction(() => {
        this.db
          .prepare(
            `UPDATE skills SET status = 'active', status_reason = ?, failure_count = 0,
                               updated_at = ?, status_changed_at = ?, streak_since = ? WHERE name = ?`,
          )
          .run(reason, at.getTime(), at.getTime(), at.getTime(), name);
        return this.reevaluate(name, at);
      })(),
    );
  }

  setProtected(name: string, pinned: boolean, at: Date): SkillRecord {
    return withSqlite("registry", "pin a skill", () =>
      this.db.transaction(() => {
        this.db.prepare("UPDATE skills SET protected = ?, updated_at = ? WHERE name = ?").run(pinned ? 1 : 0, at.getTime(), name);
        return this.reevaluate(name, at);
      })(),
    );
  }
}
