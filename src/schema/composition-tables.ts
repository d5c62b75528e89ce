import type { Migration } from "./migration.js";

/**
 * Composition's tables: the dependencies each skill version declares, and the outcome of
 * re-testing a dependent when its dependency changed (docs/composition.md). A version with no row
 * is a plain skill with no dependencies: every skill from before composition existed.
 * IF NOT EXISTS: files from before the one list created these tables when the service opened them.
 */
export const COMPOSITION_MIGRATIONS: readonly Migration[] = [
  {
    concern: "composition",
    summary: "declared dependencies and dependents' re-tests",
    sql: `CREATE TABLE IF NOT EXISTS skill_dependencies (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('plain', 'composed')),
            depends_on TEXT NOT NULL,
            PRIMARY KEY (name, version)
          ) STRICT;
          CREATE TABLE IF NOT EXISTS dependency_retests (
            dependent TEXT NOT NULL,
            dependency TEXT NOT NULL,
            dependency_version INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            error TEXT NOT NULL,
            at INTEGER NOT NULL,
            PRIMARY KEY (dependent, dependency)
          ) STRICT;`,
  },
];
