import { addColumnIfMissing, type Migration } from "./migration.js";

/**
 * The learning half's tables: recorded sessions (and the parts of large ones), mined patterns,
 * candidates, what each candidate covers, and the evolution events of auto-created skills
 * (docs/learning.md). IF NOT EXISTS: files from before the one list created these tables when the
 * service opened them, some before `last_seen` existed.
 */
export const LEARNING_MIGRATIONS: readonly Migration[] = [
  {
    concern: "learning",
    summary: "sessions, patterns, candidates and evolution events",
    apply: (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS learning_sessions (
          agent_id TEXT NOT NULL,
          session_key TEXT NOT NULL,
          hashes BLOB NOT NULL,
          tool_calls INTEGER NOT NULL,
          recorded_at TEXT NOT NULL,
          PRIMARY KEY (agent_id, session_key)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS learning_session_parts (
          agent_id TEXT NOT NULL,
          session_key TEXT NOT NULL,
          part INTEGER NOT NULL,
          hashes BLOB NOT NULL,
          PRIMARY KEY (agent_id, session_key, part)
        );
        CREATE TABLE IF NOT EXISTS learning_patterns (
          agent_id TEXT NOT NULL,
          hash TEXT NOT NULL,
          sessions INTEGER NOT NULL,
          session_keys TEXT NOT NULL DEFAULT '[]',
          last_seen TEXT NOT NULL DEFAULT '',
          PRIMARY KEY (agent_id, hash)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS skill_candidates (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          agent_id TEXT NOT NULL DEFAULT 'default',
          hash TEXT NOT NULL,
          name TEXT NOT NULL,
          description TEXT,
          tool_sequence TEXT NOT NULL,
          session_keys TEXT NOT NULL,
          occurrences INTEGER NOT NULL DEFAULT 1,
          status TEXT NOT NULL DEFAULT 'candidate' CHECK (status IN ('candidate', 'promoted', 'dismissed')),
          created_at TEXT NOT NULL DEFAULT (datetime('now')),
          promoted_at TEXT,
          example_arguments TEXT NOT NULL DEFAULT '[]',
          skill_name TEXT NOT NULL DEFAULT '',
          UNIQUE (agent_id, hash)
        );
        CREATE TABLE IF NOT EXISTS learning_covered (
          agent_id TEXT NOT NULL,
          hash TEXT NOT NULL,
          candidate_id INTEGER NOT NULL,
          PRIMARY KEY (agent_id, hash, candidate_id)
        ) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS skill_evolution_events (
          id INTEGER PRIMARY KEY AUTOINCREMENT,
          agent_id TEXT NOT NULL,
          skill_name TEXT NOT NULL,
          from_version INTEGER NOT NULL,
          to_version INTEGER NOT NULL,
          candidate_id INTEGER NOT NULL,
          overlap REAL NOT NULL,
          summary TEXT NOT NULL,
          at TEXT NOT NULL
        );
        CREATE INDEX IF NOT EXISTS skill_evolution_by_skill ON skill_evolution_events (skill_name, id);`);
      // Patterns from before the quota have no last_seen: they count as the oldest.
      addColumnIfMissing(db, "learning_patterns", "last_seen", "TEXT NOT NULL DEFAULT ''");
      // The quota's eviction order (docs/learning.md#pattern-quota), read from an index so an
      // eviction never sorts an agent's whole table.
      db.exec("CREATE INDEX IF NOT EXISTS learning_patterns_by_age ON learning_patterns (agent_id, last_seen, sessions)");
    },
  },
];
