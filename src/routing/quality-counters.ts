import type Database from "better-sqlite3";

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
 * The counters, per skill name across versions, in registry.db (`skill_quality`, created by its
 * migrations in src/schema). Counting is best effort beside the route: a failure here never fails a route or a call.
 */
export class QualityCounters {
  constructor(private readonly db: Database.Database) {}

  selected(names: readonly string[]): void {
    const add = this.db.prepare(
      "INSERT INTO skill_quality (name, selections) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET selections = selections + 1",
    );
    this.db.transaction(() => {
      for (const name of names) add.run(name);
    })();
  }

  applied(name: string, success: boolean): void {
    const completed = success ? 1 : 0;
    this.db
      .prepare(
        `INSERT INTO skill_quality (name, applied, completions) VALUES (?, 1, ?)
         ON CONFLICT (name) DO UPDATE SET applied = applied + 1, completions = completions + excluded.completions`,
      )
      .run(name, completed);
  }

  fallback(name: string): void {
    this.db
      .prepare("INSERT INTO skill_quality (name, fallbacks) VALUES (?, 1) ON CONFLICT (name) DO UPDATE SET fallbacks = fallbacks + 1")
      .run(name);
  }

  get(name: string): SkillQuality {
    return (
      this.db
        .prepare<[string], SkillQuality>("SELECT selections, applied, completions, fallbacks FROM skill_quality WHERE name = ?")
        .get(name) ?? ZERO
    );
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
