import { addColumnIfMissing, type Migration } from "./migration.js";

/**
 * Where a skill's health counts start: `activated_at`, when its active version became active (a
 * registration, patch, folder edit or rollback), which routing's quality counters are kept for
 * (docs/routing.md#quality-filter); and `streak_since`, when its failure streak last started over (the
 * same, or a restore), which agents' verdicts are counted back to (docs/learning.md#outcomes-and-the-streak).
 * Existing skills keep their counters (activated_at 0 matches the counters' since 0) and count their
 * streak from the upgrade on. Columns are added only when missing (as routing's step does), so the
 * step can run over a file that already has them.
 */
export const HEALTH_EPOCH_MIGRATIONS: readonly Migration[] = [
  {
    concern: "registry",
    summary: "when each skill's active version became active and its streak started, for per-version quality counters and verdict streaks",
    apply: (db) => {
      addColumnIfMissing(db, "skills", "activated_at", "INTEGER NOT NULL DEFAULT 0");
      addColumnIfMissing(db, "skills", "streak_since", "INTEGER NOT NULL DEFAULT 0");
      db.prepare("UPDATE skills SET streak_since = ?").run(Date.now());
      addColumnIfMissing(db, "route_outcomes", "since", "INTEGER NOT NULL DEFAULT 0");
      addColumnIfMissing(db, "skill_quality", "since", "INTEGER NOT NULL DEFAULT 0");
    },
  },
];
