/** The control plane: intake, registry, canonical store, lifecycle. The only way in. */
export { CanonicalStore } from "./canonical-store.js";
export type { CodeIntake, IntakeWarning, PreparedCode } from "./code-intake.js";
export { migrateLegacySkills, type LegacyMigrationReport } from "./legacy-migration.js";
export { MirrorWriter } from "./mirror-writer.js";
export { rebuildRegistry, RebuildRefusedError, type RebuildReport, REGISTRY_FILE } from "./rebuild-registry.js";
export { reconcile, type ReconcileReport } from "./reconcile.js";
export { DEFAULT_HEALTH_POLICY, type HealthPolicy, windowRate } from "./skill-health.js";
export type { SkillIndexer } from "./skill-indexer.js";
export { canSee } from "./skill-access.js";
export { SkillRegistry, type SkillAccess, type SkillRecord, type SkillStatus, type SkillVisibility, type VersionRecord } from "./skill-registry.js";
export {
  SkillService,
  type CallContext,
  type InvocationResult,
  type RebuildIndexesReport,
  type RegistrationResult,
  type SkillStats,
  type SkillWithCode,
} from "./skill-service.js";
export { LIMITS, SKILL_NAME_PATTERN } from "./request-validation.js";
