import Database from "better-sqlite3";

/**
 * Opens registry.db the way every component shares it: WAL, so the registry and routing write
 * through their own connections side by side, and a busy timeout so neither fails on the other's
 * short write transactions. `durable` adds `synchronous = FULL` (the registry's acknowledged
 * writes survive a power cut; routing's indexes can be rebuilt and do without).
 */
export function openRegistryDatabase(file: string, options: { durable: boolean }): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  if (options.durable) db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  return db;
}
