/** registry.db's schema: the one ordered list of migrations and the function that runs it. The only way in. */
export {
  DERIVED_INDEX_TABLES,
  migrateRegistry,
  type MigrationReport,
  REGISTRY_SCHEMA,
  REGISTRY_SCHEMA_VERSION,
  schemaVersion,
} from "./registry-schema.js";
export type { Migration } from "./migration.js";
