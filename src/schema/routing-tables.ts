import { addColumnIfMissing, type Migration } from "./migration.js";

/**
 * Routing's tables: its bookkeeping (`routing_meta`), the routes it answered and their reported
 * outcomes, the queries that found each skill (`route_evidence`) and the per-skill quality
 * counters (docs/routing.md). IF NOT EXISTS: files from before the one list created these tables
 * when the service opened them, some before routes had an agent.
 */
export const ROUTING_MIGRATIONS: readonly Migration[] = [
  {
    concern: "routing",
    summary: "routes, their outcomes, route evidence and quality counters",
    apply: (db) => {
      db.exec(`
        CREATE TABLE IF NOT EXISTS routing_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS routes (route_id TEXT PRIMARY KEY, query TEXT NOT NULL, names TEXT NOT NULL, created_at INTEGER NOT NULL) STRICT;
        CREATE TABLE IF NOT EXISTS route_outcomes (route_id TEXT NOT NULL, name TEXT NOT NULL, success INTEGER NOT NULL, at INTEGER NOT NULL,
                                                  PRIMARY KEY (route_id, name)) STRICT;
        CREATE INDEX IF NOT EXISTS route_outcomes_by_name ON route_outcomes (name);
        CREATE TABLE IF NOT EXISTS route_evidence (name TEXT NOT NULL, query TEXT NOT NULL, hash TEXT NOT NULL, at INTEGER NOT NULL,
                                                  PRIMARY KEY (name, hash)) STRICT;
        CREATE TABLE IF NOT EXISTS skill_quality (
          name TEXT PRIMARY KEY,
          selections INTEGER NOT NULL DEFAULT 0,
          applied INTEGER NOT NULL DEFAULT 0,
          completions INTEGER NOT NULL DEFAULT 0,
          fallbacks INTEGER NOT NULL DEFAULT 0
        ) STRICT;`);
      // Routes recorded before identity belong to nobody: no agent can credit them.
      addColumnIfMissing(db, "routes", "agent", "TEXT NOT NULL DEFAULT ''");
    },
  },
];
