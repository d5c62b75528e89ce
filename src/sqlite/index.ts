/** registry.db: how it is opened and how its failures become domain errors. The only way in. */
export { DEFAULT_SQLITE_CACHE_KIB, openRegistryDatabase, type RegistryDatabaseOptions } from "./open-database.js";
export { fromSqliteError, type SqliteStoreName, withSqlite } from "./sqlite-errors.js";
