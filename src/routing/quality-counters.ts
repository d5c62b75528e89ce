import type Database from "better-sqlite3";
import { ACTIVATED_AT } from "./skill-router.js";

/** The per-skill quality counters (docs/skill-sources.md#quality-counters). */
export interface SkillQuality {
  /** Times routing returned the skill. */
  readonly selections: number;
  /** Invocations that carried a route id of a route that returned the skill. */
  readonly applied: number;
  /** Those that succeeded. */
  readonly completions: number;
  /** Reports that the agent used something else instead (RecordRouteFeedback with `fallback`). */
  readonly fallbacks: number;
}

const ZERO: SkillQuality = { selections: 0, applied: 0, completions: 0, fallbacks: 0 };

/**
 * The counters of each skill's active version, in registry.db (`skill_quality`, created by its
 * migrations in src/schema): one row a skill, for the version active since `since`; the first count
 * after another version became active starts the row over (docs/routing.md#quality-filter). Counting
 * is best effort beside the route: a failure here never fails a route or a call.
 */
export class QualityCounters {
  constructor(private readonly db: Database.Database) {}

  selected(names: readonly string[]): void {
    this.db.transaction(() => {
      for (const name of names) this.count(name, "selections = selections + 1", [], "selections", [1]);
    })();
  }

  applied(name: string, success: boolean): void {
    this.db.transaction(() =>
      this.count(name, "applied = applied + 1, completions = completions + ?", [success ? 1 : 0], "applied, completions", [
        1,
        success ? 1 : 0,
      ]),
    )();
  }

  fallback(name: string): void {
    this.db.transaction(() => this.count(name, "fallbacks = fallbacks + 1", [], "fallbacks", [1]))();
  }

  /** The active version's counters; zero when none were counted since it became active. */
  get(name: string): SkillQuality {
    return (
      this.db
        .prepare<[string, string], SkillQuality>(
          `SELECT selections, applied, completions, fallbacks FROM skill_quality WHERE name = ? AND since = ${ACTIVATED_AT}`,
        )
        .get(name, name) ?? ZERO
    );
  }

  /** Clears a skill's counters (ResetSkillQuality); returns them as they were. */
  reset(name: string): SkillQuality {
    const before = this.get(name);
    this.db.prepare("DELETE FROM skill_quality WHERE name = ?").run(name);
    return before;
  }

  /** One count for the active version: a row kept for an earlier one starts over first. Call inside a transaction. */
  private count(name: string, change: string, changeArgs: number[], columns: string, values: number[]): void {
    this.db
      .prepare(
        `UPDATE skill_quality SET selections = 0, applied = 0, completions = 0, fallbacks = 0, since = ${ACTIVATED_AT}
         WHERE name = ? AND since <> ${ACTIVATED_AT}`,
      )
      .run(name, name, name);
    const updated = this.db.prepare(`UPDATE skill_quality SET ${change} WHERE name = ?`).run(...changeArgs, name).changes;
    if (updated > 0) return;
    this.db
      .prepare(`INSERT INTO skill_quality (name, since, ${columns}) VALUES (?, ${ACTIVATED_AT}, ${values.map(() => "?").join(", ")})`)
      .run(name, name, ...values);
  }
}

/**
 * The second quality filter (docs/skill-sources.md#quality-counters): applied at least twice and
 * replaced by something else more than half the time. (Its first filter, selected repeatedly and
 * never completed, is routing's quality filter: docs/routing.md#quality-filter.)
 */
export function failsFallbackFilter(quality: SkillQuality): boolean {
  return quality.applied >= 2 && quality.fallbacks / quality.applied > 0.5;
}
