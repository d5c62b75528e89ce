import { ConflictError, errorMessage, InternalError, ResourceExhaustedError, SkillEngineError, UnavailableError } from "../errors/index.js";

/** Which store of registry.db failed, as the caller's message names it ("the registry", "the routing index"). */
export type SqliteStoreName = "registry" | "routing index" | "playbook";

/**
 * The one place where SQLite failures become domain errors: busy or locked → unavailable (retry),
 * a full disk → resource exhausted, read-only or failing storage → unavailable, a constraint → a concurrent change (conflict), anything
 * else → internal. Domain errors thrown inside the work pass through unchanged.
 */
export function fromSqliteError(error: unknown, store: SqliteStoreName, action: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const code = (error as { code?: unknown }).code;
  const sqliteCode = typeof code === "string" ? code : "";
  if (sqliteCode === "SQLITE_BUSY" || sqliteCode === "SQLITE_LOCKED") {
    return new UnavailableError(`the ${store} is busy; could not ${action}, retry`, { cause: error });
  }
  if (sqliteCode === "SQLITE_FULL") {
    return new ResourceExhaustedError(`the disk holding the ${store} is full; could not ${action}; free space and retry`, { cause: error });
  }
  if (sqliteCode.startsWith("SQLITE_READONLY")) {
    return new UnavailableError(
      `the ${store} cannot be written (a read-only file system or permissions); could not ${action}; retry once it is writable`,
      { cause: error },
    );
  }
  if (sqliteCode.startsWith("SQLITE_IOERR")) {
    return new UnavailableError(`the disk holding the ${store} failed (${sqliteCode}); could not ${action}; retry`, { cause: error });
  }
  if (sqliteCode.startsWith("SQLITE_CONSTRAINT")) {
    return new ConflictError(`a concurrent change conflicted; could not ${action}, retry`, { cause: error });
  }
  return new InternalError(`${store} error: could not ${action}: ${errorMessage(error)}`, { cause: error });
}

/** Runs synchronous SQLite work, translating whatever it throws through `fromSqliteError`. */
export function withSqlite<T>(store: SqliteStoreName, action: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw fromSqliteError(error, store, action);
  }
}
