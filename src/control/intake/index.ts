/** Intake: what every path that writes skill code passes first (validation, normalization, guard, syntax). The only way in. */
export type { CodeIntake, IntakeInProgress, IntakeOptions, IntakeWarning, PreparedCode } from "./code-intake.js";
export { GuardViolationError, scanSkillCode } from "./content-guard.js";
export {
  type DeclaredPackageNames,
  type DependencyScanInput,
  localModulesOf,
  MISSING_DEPENDENCY_RULE,
  missingDependencyWarnings,
  normalizeDistributionName,
  requirementName,
} from "./dependency-scan.js";
export { IMPORT_ALIASES, type ImportAlias, providerOf } from "./import-aliases.js";
export { type InputFileLimits, validateInputFiles } from "./input-files.js";
export { missingModuleCause, missingModuleOf } from "./missing-module.js";
export { GUARD_RULES } from "./guard-rules.js";
export { normalizeSkillCode } from "./normalize-code.js";
export { type ContentGuardMode, NormalizingGuardedIntake } from "./normalizing-guarded-intake.js";
export { CPythonSyntaxChecker, DEBIAN_PYTHON, type ImportedModule, type PythonSyntaxChecker } from "./python-syntax.js";
export {
  compileParametersSchema,
  LIMITS,
  type PayloadValidator,
  type RegistrationInput,
  SKILL_NAME_PATTERN,
  type ValidRegistration,
  validateRegistration,
  validateSkillName,
} from "./request-validation.js";
