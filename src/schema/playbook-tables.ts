import type { Migration } from "./migration.js";

/**
 * The playbook's tables: `lessons` (the source of truth), `lesson_retrievals` (what each agent was
 * shown and when, for credit) and `playbook_meta` (docs/playbook.md).
 * IF NOT EXISTS: files from before the one list created these tables when the service opened them.
 */
export const PLAYBOOK_MIGRATIONS: readonly Migration[] = [
  {
    concern: "playbook",
    summary: "lessons, their retrievals and the playbook's bookkeeping",
    sql: `CREATE TABLE IF NOT EXISTS lessons (
            id TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            trigger TEXT NOT NULL,
            anti_pattern TEXT NOT NULL,
            correct_pattern TEXT NOT NULL,
            domains TEXT NOT NULL,
            confidence REAL NOT NULL,
            source TEXT NOT NULL,
            source_challenge_hash TEXT NOT NULL,
            challenge_text_hash TEXT NOT NULL,
            state TEXT NOT NULL,
            archived_reason TEXT NOT NULL DEFAULT '',
            visibility TEXT NOT NULL,
            verified INTEGER NOT NULL DEFAULT 0,
            pinned INTEGER NOT NULL DEFAULT 0,
            retrievals INTEGER NOT NULL DEFAULT 0,
            helpful_retrievals INTEGER NOT NULL DEFAULT 0,
            times_added INTEGER NOT NULL DEFAULT 1,
            created_at INTEGER NOT NULL,
            updated_at INTEGER NOT NULL,
            last_retrieved_at INTEGER,
            last_helpful_at INTEGER,
            duplicate_key TEXT NOT NULL DEFAULT ''
          ) STRICT;
          CREATE INDEX IF NOT EXISTS lessons_by_owner ON lessons (owner, state);
          CREATE INDEX IF NOT EXISTS lessons_by_duplicate_key ON lessons (owner, duplicate_key);
          CREATE TABLE IF NOT EXISTS lesson_retrievals (
            id INTEGER PRIMARY KEY,
            retrieval_id TEXT NOT NULL,
            agent TEXT NOT NULL,
            lesson_id TEXT NOT NULL,
            at INTEGER NOT NULL,
            credited INTEGER NOT NULL DEFAULT 0
          ) STRICT;
          CREATE INDEX IF NOT EXISTS lesson_retrievals_by_agent ON lesson_retrievals (agent, at);
          CREATE INDEX IF NOT EXISTS lesson_retrievals_by_time ON lesson_retrievals (at);
          CREATE TABLE IF NOT EXISTS playbook_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;`,
  },
];
