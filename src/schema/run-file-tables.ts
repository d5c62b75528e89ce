import type { Migration } from "./migration.js";

/**
 * The files each run returned, as its invocation row records them (docs/console.md#recent-runs):
 * the first few paths and sizes as JSON, and the count and bytes of all of them. Only what the console
 * shows, never the bytes: a run's files go back to its caller and are not kept.
 */
export const RUN_FILE_MIGRATIONS: readonly Migration[] = [
  {
    concern: "files",
    summary: "each invocation's returned files: the first paths and sizes, the count and bytes of all",
    sql: `ALTER TABLE invocations ADD COLUMN output_files TEXT NOT NULL DEFAULT '[]';
          ALTER TABLE invocations ADD COLUMN output_file_count INTEGER NOT NULL DEFAULT 0;
          ALTER TABLE invocations ADD COLUMN output_file_bytes INTEGER NOT NULL DEFAULT 0;
          CREATE INDEX invocations_by_caller ON invocations (skill_name, caller, id);`,
  },
];
