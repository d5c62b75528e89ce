/** Recovery: start-up reconciliation, the registry rebuilt from the mirror, legacy migration. The only way in. */
export { migrateLegacySkills, type LegacyMigrationReport, LEGACY_SKILLS_DIR, MIGRATION_MARKER_FILE } from "./legacy-migration.js";
export { rebuildRegistry, RebuildRefusedError, type RebuildReport, type RebuildOptions, type RebuiltSkill } from "./rebuild-registry.js";
export { reconcile, type ReconcileReport } from "./reconcile.js";
