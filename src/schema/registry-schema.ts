import type Database from "better-sqlite3";
import { COMPOSITION_MIGRATIONS } from "./composition-tables.js";
import { EGRESS_MIGRATIONS } from "./egress-tables.js";
import { EMBEDDING_MIGRATIONS } from "./embedding-tables.js";
import { ENVIRONMENT_MIGRATIONS } from "./environment-tables.js";
import { HEALTH_EPOCH_MIGRATIONS } from "./health-epoch-tables.js";
import { LEARNING_MIGRATIONS } from "./learning-tables.js";
import type { Migration } from "./migration.js";
import { MIRROR_MIGRATIONS } from "./mirror-tables.js";
import { PLAYBOOK_MIGRATIONS } from "./playbook-tables.js";
import { REGISTRY_MIGRATIONS } from "./registry-tables.js";
import { ROUTING_MIGRATIONS } from "./routing-tables.js";
import { RUN_ERROR_MIGRATIONS } from "./run-error-tables.js";
import { RUN_FILE_MIGRATIONS } from "./run-file-tables.js";
import { SECRET_MIGRATIONS } from "./secret-tables.js";
import { SOURCE_MIGRATIONS } from "./source-tables.js";
import { TEST_FILE_MIGRATIONS } from "./test-file-tables.js";

/**
 * Every table of registry.db, in the one order they are created (docs/architecture.md#storage).
 * Append only: `PRAGMA user_version` is the number of steps a file has run, so a released step is
 * never edited, removed or moved. The search indexes' tables are not here: they hold derived data
 * whose shape follows the configuration (see DERIVED_INDEX_TABLES).
 */
export const REGISTRY_SCHEMA: readonly Migration[] = [
  ...REGISTRY_MIGRATIONS,
  ...COMPOSITION_MIGRATIONS,
  ...SOURCE_MIGRATIONS,
  ...PLAYBOOK_MIGRATIONS,
  ...LEARNING_MIGRATIONS,
  ...ROUTING_MIGRATIONS,
  ...EMBEDDING_MIGRATIONS,
  ...ENVIRONMENT_MIGRATIONS,
  ...TEST_FILE_MIGRATIONS,
  ...RUN_FILE_MIGRATIONS,
  ...HEALTH_EPOCH_MIGRATIONS,
  ...SECRET_MIGRATIONS,
  ...EGRESS_MIGRATIONS,
  ...RUN_ERROR_MIGRATIONS,
  ...MIRROR_MIGRATIONS,
];

/** The schema version this code writes: the number of steps in the list. */
export const REGISTRY_SCHEMA_VERSION = REGISTRY_SCHEMA.length;

/**
 * Tables the search indexes create and re-create themselves, by name prefix: an FTS5 index's
 * tokenizer and a vector index's dimensions are configuration, and changing either rebuilds the
 * index from the registry. They never hold data that exists nowhere else.
 */
export const DERIVED_INDEX_TABLES: readonly string[] = ["skill_keywords", "lesson_keywords", "skill_vectors", "lesson_vectors"];

/** What `migrateRegistry` did: the file's schema version before and after. */
export interface MigrationReport {
  readonly from: number;
  readonly to: number;
}

/**
 * Brings an open registry.db to REGISTRY_SCHEMA_VERSION, one step per transaction, so a crash
 * leaves the file at a step boundary. The version is read again under a write lock: two processes
 * opening one file at once run each step once. A file written by newer code is refused rather than
 * used with tables this code does not know.
 */
export function migrateRegistry(db: Database.Database): MigrationReport {
  const from = schemaVersion(db);
  if (from > REGISTRY_SCHEMA_VERSION) {
    throw new Error(
      `registry.db is at schema version ${from}, newer than this service's ${REGISTRY_SCHEMA_VERSION}: ` +
        "it was written by a newer release; run that release or newer",
    );
  }
  for (let step = from; step < REGISTRY_SCHEMA_VERSION; step++) {
    db.transaction(() => {
      if (schemaVersion(db) !== step) return;
      const migration = REGISTRY_SCHEMA[step] as Migration;
      if (migration.sql !== undefined) db.exec(migration.sql);
      migration.apply?.(db);
      db.pragma(`user_version = ${step + 1}`);
    }).immediate();
  }
  return { from, to: REGISTRY_SCHEMA_VERSION };
}

/** The number of steps the file has run (0 for a new file). */
export function schemaVersion(db: Database.Database): number {
  return db.pragma("user_version", { simple: true }) as number;
}
