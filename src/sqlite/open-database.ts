import Database from "better-sqlite3";
import { migrateRegistry } from "../schema/index.js";
import { cacheStatements } from "./statement-cache.js";

/**
 * Page cache per connection, in KiB (docs/performance.md#memory-over-time). better-sqlite3 builds
 * SQLite with 16,000 KiB a connection; the service keeps five connections on one file, so that
 * default let the caches grow with the database towards 80 MB, which a soak read as a slow leak.
 */
export const DEFAULT_SQLITE_CACHE_KIB = 2048;

export interface RegistryDatabaseOptions {
  /** `synchronous = FULL`: acknowledged writes survive a power cut. */
  readonly durable: boolean;
  /** This connection's page cache, in KiB. @default DEFAULT_SQLITE_CACHE_KIB */
  readonly cacheKib?: number;
}

/**
 * Opens registry.db the way every component shares it: WAL, so the registry and routing write
 * through their own connections side by side, and a busy timeout so neither fails on the other's
 * short write transactions. `durable` adds `synchronous = FULL` (the registry's acknowledged
 * writes survive a power cut; routing's indexes can be rebuilt and do without). Each connection's
 * page cache is bounded by `cacheKib`, so what SQLite holds in memory does not grow with the file.
 * Every open brings the file to the current schema (docs/architecture.md#storage), so no store
 * creates tables of its own and every connection sees the same schema. Its statements are compiled
 * once per text (statement-cache.ts).
 */
export function openRegistryDatabase(file: string, options: RegistryDatabaseOptions): Database.Database {
  const db = new Database(file);
  db.pragma(`cache_size = -${Math.max(64, Math.floor(options.cacheKib ?? DEFAULT_SQLITE_CACHE_KIB))}`);
  db.pragma("journal_mode = WAL");
  if (options.durable) db.pragma("synchronous = FULL");
  db.pragma("busy_timeout = 5000");
  try {
    migrateRegistry(db);
  } catch (error) {
    db.close();
    throw error;
  }
  cacheStatements(db);
  return db;
}
