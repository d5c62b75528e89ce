/** The control plane: the use cases, and one sub-package per concern behind them. The only way in. */
export { canManage, canSee, type GranteeInput, pinnedVersionFor, SkillSharing } from "./access/index.js";
export {
  type CodeIntake,
  type ContentGuardMode,
  CPythonSyntaxChecker,
  type IntakeWarning,
  LIMITS,
  NormalizingGuardedIntake,
  type PreparedCode,
  SKILL_NAME_PATTERN,
} from "./intake/index.js";
export {
  migrateLegacySkills,
  type LegacyMigrationReport,
  rebuildRegistry,
  RebuildRefusedError,
  type RebuildReport,
  reconcile,
  type ReconcileReport,
} from "./recovery/index.js";
export {
  DEFAULT_HEALTH_POLICY,
  type DailyOutcome,
  type DeprecationRisk,
  deprecationRisk,
  type HealthPolicy,
  isLive as isLiveStatus,
  leavesOwnRoutes,
  REGISTRY_FILE,
  type SkillAccess,
  type SkillGrant,
  type SkillRecord,
  SkillRegistry,
  type SkillStatus,
  type SkillVisibility,
  type OutcomeRecord,
  type SourceWindow,
  type VersionRecord,
  windowRate,
} from "./registry/index.js";
export type { SkillIndexer } from "./skill-indexer.js";
export type { DescribedSkill, DuplicateScreen, OnDuplicate, SimilarSkillReport, SkillText } from "./duplicate-screen.js";
export {
  type CatalogEntry,
  type CatalogStatus,
  Composition,
  type CompositionSettings,
  ConditionHost,
  type DependencyReport,
  MandatorySkillError,
  type OnFailure,
  type SkillKind,
  type StepInput,
  type StepOutcome,
} from "./composition/index.js";
export {
  type CallContext,
  type ComposedRegistrationInput,
  type ComposedRegistrationResult,
  type DependentRetest,
  type HealthTimeline,
  type HiddenRetests,
  type LibraryKind,
  type InvocationResult,
  type RebuildIndexesReport,
  type RegistrationResult,
  type SkillStats,
  SkillService,
  type SkillWithCode,
} from "./skill-service.js";
export { CanonicalStore, MirrorWriter } from "./store/index.js";
export {
  type FolderContent,
  FolderStore,
  type ScanReport,
  type SkillContent,
  SkillBundles,
  SkillSources,
  type SourcedCatalogEntry,
  type SourceEntry,
  SourceStore,
  SourceWatcher,
} from "../sources/index.js";
