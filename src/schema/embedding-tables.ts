import type { Migration } from "./migration.js";

/**
 * The embedding cache: one vector per model and text, so a restart or a rebuild does not embed
 * again what it embedded before (docs/routing.md). IF NOT EXISTS: files from before the one list
 * created this table when the service opened them.
 */
export const EMBEDDING_MIGRATIONS: readonly Migration[] = [
  {
    concern: "embedding",
    summary: "cached embeddings per model and text",
    sql: `CREATE TABLE IF NOT EXISTS embedding_cache (
            model_id   TEXT    NOT NULL,
            text_hash  TEXT    NOT NULL,
            dimensions INTEGER NOT NULL,
            vector     BLOB    NOT NULL,
            created_at INTEGER NOT NULL,
            PRIMARY KEY (model_id, text_hash)
          ) STRICT`,
  },
];
