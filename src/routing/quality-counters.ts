import type Database from "better-sqlite3";

/** Seed 001's per-skill quality counters (docs/skill-sources.md#quality-counters). */
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
 * The counters, per skill name across versions, in registry.db (a table of this concern, created
 * here). Counting is best effort beside the route: a failure here never fails a route or a call.
 */
export class QualityCounters {
  constructor(private readonly db: Database.Database) {
    db.exec(`CREATE TABLE IF NOT EXISTS skill_quality (
      name TEXT PRIMARY KEY,
      selections INTEGER NOT NULL DEFAULT 0,
      applied INTEGER NOT NULL DEFAULT 0,
      completions INTEGER NOT NULL DEFAULT 0,
      fallbacks INTEGER NOT NULL DEFAULT 0
    ) STRICT`);
  }

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
 * Seed 001's second filter (docs/skill-sources.md#quality-counters): applied at least twice and
 * replaced by something else more than half the time. (Its first filter, selected repeatedly and
 * never completed, is routing's quality filter: docs/routing.md#quality-filter.)
 */
export function failsFallbackFilter(quality: SkillQuality): boolean {
  return quality.applied >= 2 && quality.fallbacks / quality.applied > 0.5;
}
