import type { Migration } from "./migration.js";

/**
 * The end of each failed invocation's stderr (docs/console.md#last-error), already redacted like
 * everything a run returns (docs/security.md#redaction), so a skill's page can show why it last
 * failed. Successful runs keep nothing: a row stays small.
 */
export const RUN_ERROR_MIGRATIONS: readonly Migration[] = [
  {
    concern: "registry",
    summary: "the end of each failed invocation's stderr and an index of failures, for the console's last error",
    // The partial index holds failures only: finding a skill's last one never walks its successes.
    sql: `ALTER TABLE invocations ADD COLUMN stderr_tail TEXT NOT NULL DEFAULT '';
          CREATE INDEX invocations_failed ON invocations (skill_name, id) WHERE success = 0;`,
  },
];
