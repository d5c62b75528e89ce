import type Database from "better-sqlite3";

/**
 * Statements kept per connection. The stores prepare their SQL where they run it; compiling the same
 * text again on every call was a fifth of a registration's CPU and more of a start-up at 100,000
 * skills (docs/performance.md#prepared-statements). Text built with values in it (a LIMIT, a list)
 * makes more entries; the oldest unused ones go first.
 */
export const STATEMENT_CACHE_SIZE = 512;

/**
 * Makes `db.prepare` return the statement compiled earlier for the same text. A statement still
 * being iterated (`busy`) is never handed out twice: a nested use of the same text gets a fresh one.
 * Safe because no store changes a statement's modes (`pluck`, `raw`, `expand`, `safeIntegers`) or
 * binds parameters to it for good (`bind`): every call passes its own.
 */
export function cacheStatements(db: Database.Database, capacity = STATEMENT_CACHE_SIZE): void {
  const compile = db.prepare.bind(db);
  const cache = new Map<string, Database.Statement>();
  const prepare = (source: string): Database.Statement => {
    const cached = cache.get(source);
    if (cached !== undefined && !cached.busy) {
      // Re-inserted: a Map keeps insertion order, so the first key is the least recently used.
      cache.delete(source);
      cache.set(source, cached);
      return cached;
    }
    const statement = compile(source);
    if (cached === undefined) {
      cache.set(source, statement);
      if (cache.size > capacity) cache.delete(cache.keys().next().value as string);
    }
    return statement;
  };
  db.prepare = prepare as typeof db.prepare;
}
