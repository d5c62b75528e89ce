import type { Migration } from "./migration.js";

/**
 * Secrets a version declares (docs/security.md#declaring-and-delivering): the names of the invoking
 * agent's secrets its runs are handed, part of the version like its packages. Names only: the values
 * are the secret store's (src/secrets/), never in registry.db.
 */
export const SECRET_MIGRATIONS: readonly Migration[] = [
  {
    concern: "secrets",
    summary: "each version's declared secret names (never values)",
    sql: `ALTER TABLE skill_versions ADD COLUMN secrets TEXT NOT NULL DEFAULT '[]';`,
  },
];
