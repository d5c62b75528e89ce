/** The registry: the SQLite source of truth for skills, versions and invocations, and the health rules. The only way in. */
export type {
  DailyOutcome,
  ImportedSkill,
  InvocationOutcome,
  GranteeKind,
  LibraryKind,
  LibraryOptions,
  ListOptions,
  ReturnedFile,
  SkillGrant,
  SkillSharing,
  SkillAccess,
  SkillFileState,
  SkillRecord,
  SkillVisibility,
  TestFileEntry,
  UsageFigures,
  VersionOrigin,
  VersionPackages,
  VersionRecord,
} from "./records.js";
export { SKILL_VISIBILITIES, VERSION_ORIGINS } from "./records.js";
export {
  DEFAULT_HEALTH_POLICY,
  evaluateHealth,
  type HealthPolicy,
  isLive,
  LIVE_STATUSES,
  quantile,
  retirementReasons,
  SKILL_STATUSES,
  type SkillStatus,
  type WindowStats,
  windowRate,
} from "./skill-health.js";
export { OUTCOME_SOURCES, type OutcomeRecord, type OutcomeSource, type SourceWindow } from "./outcome-signals.js";
export { leavesOwnRoutes, ONE_VOTE, type OutcomeReporter } from "./outcome-trust.js";
export { type DeprecationRisk, deprecationRisk, type RiskInput, type RiskThreshold } from "./deprecation-risk.js";
export { REGISTRY_FILE, SkillRegistry } from "./skill-registry.js";
export type { LastOutcome } from "./reported-outcomes.js";
export type { MirrorChange } from "./mirror-changes.js";
