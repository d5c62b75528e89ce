/** registry.db: how it is opened and how its failures become domain errors. The only way in. */
export { openRegistryDatabase } from "./open-database.js";
export { fromSqliteError, type SqliteStoreName, withSqlite } from "./sqlite-errors.js";
