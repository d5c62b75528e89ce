import type Database from "better-sqlite3";

/**
 * One step of registry.db's schema. The list of steps is append-only: a step, once released, is
 * never edited or reordered, because `PRAGMA user_version` records how many of them a file has run.
 */
export interface Migration {
  /** The room whose tables the step creates or changes ("registry", "playbook", ...). */
  readonly concern: string;
  /** What the step does, for the log line and docs/architecture.md#storage. */
  readonly summary: string;
  /** The step as SQL, or as code when it must look at the file first (a column that may exist). */
  readonly sql?: string;
  readonly apply?: (db: Database.Database) => void;
}

/** Adds a column unless the table already has it (files whose tables were created before the column). */
export function addColumnIfMissing(db: Database.Database, table: string, column: string, definition: string): void {
  const columns = db.prepare<[string], { name: string }>("SELECT name FROM pragma_table_info(?)").all(table);
  if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`);
}
