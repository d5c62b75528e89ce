import type { Migration } from "./migration.js";

/**
 * Skill folders' tables: which registry versions came from a folder, and the ids kept for
 * read-only folders (docs/skill-sources.md). A registry version with no row is not a folder skill.
 * IF NOT EXISTS: files from before the one list created these tables when the service opened them.
 */
export const SOURCE_MIGRATIONS: readonly Migration[] = [
  {
    concern: "sources",
    summary: "folder skills' versions and read-only folders' ids",
    sql: `CREATE TABLE IF NOT EXISTS skill_source_versions (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            skill_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('executable', 'instructions')),
            entrypoint TEXT NOT NULL,
            root TEXT NOT NULL,
            folder TEXT NOT NULL,
            folder_hash TEXT NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (name, version)
          ) STRICT;
          CREATE TABLE IF NOT EXISTS skill_source_ids (
            folder TEXT PRIMARY KEY,
            skill_id TEXT NOT NULL
          ) STRICT;`,
  },
];
