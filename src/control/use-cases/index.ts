/** The control plane's use cases, one per file, over one shared core. The only way in. */
export type { AccessChanges } from "./access-changes.js";
export type { ConsoleReads, HealthTimeline, LibraryKind, RecentRuns } from "./console-reads.js";
export type {
  ControlDependencies,
  DeclaredPackages,
  FolderHeader,
  FolderRun,
  FolderSkillRuns,
  SkillEnvironments,
  SkillSecrets,
} from "./control-dependencies.js";
export { type ControlPlane, createControlPlane } from "./control-plane.js";
export type { DependentRetest, HiddenRetests } from "./dependent-retests.js";
export type {
  EnvironmentAdministration,
  EnvironmentLockEntry,
  EnvironmentOperations,
  EnvironmentRebuildOutcome,
  EnvironmentState,
  EnvironmentView,
  RuntimeReport,
} from "./environment-operations.js";
export type { FolderRegistration, FolderSkillInput, FolderSkills } from "./folder-skills.js";
export type { InvocationResult, Invocation, InvokeInput } from "./invocation.js";
export type { Lifecycle, TakeOutInput } from "./lifecycle.js";
export type { Operations, RebuildIndexesReport } from "./operations.js";
export type { PatchInput, Patching } from "./patching.js";
export type { ComposedRegistrationInput, ComposedRegistrationResult, RegisterComposedSkill } from "./register-composed-skill.js";
export type { RegisterSkill, RegisterSkillInput, RegistrationResult } from "./register-skill.js";
export { EXAMPLE_QUERY_LIMITS } from "./registration-rules.js";
export type { RetiredSkill, RetirementSweep, RetirementSweepInput, RetirementSweepReport } from "./retirement-sweep.js";
export { SkillLookup } from "./skill-lookup.js";
export type { ListInput, SkillQueries, SkillStats, SkillWithCode } from "./skill-queries.js";
