/** Skills built from skills: composed skills and dependencies (docs/composition.md). The only way in. */
export { parseCompositionPayload, runComposition, type StepInvoker, type StepOutcome, StepPayloadError } from "./composed-run.js";
export { ConditionError, type ConditionEvaluator } from "./condition.js";
export { type CompositionFiles, refuseStepsPaths, type StepFileLimits } from "./step-files.js";
export { ConditionHost, type ConditionHostOptions } from "./condition-host.js";
export { Composition } from "./composition.js";
export {
  type CatalogEntry,
  type CatalogStatus,
  type CompositionSettings,
  type DependencyFile,
  type DependencyReport,
  MandatorySkillError,
  type ResolvedSkill,
} from "./composition-types.js";
export {
  COMPOSITION_LIMITS,
  type CompositionDefinition,
  definitionFromInput,
  formatSkillRef,
  isDefinitionText,
  type OnFailure,
  parseSkillRef,
  parseStoredDefinition,
  serializeDefinition,
  type SkillRef,
  type StepInput,
} from "./definition.js";
export type { DeclaredDependencies, SkillKind } from "./dependency-store.js";
