/** Intake: what every path that writes skill code passes first (validation, normalization, guard, syntax). The only way in. */
export type { CodeIntake, IntakeInProgress, IntakeWarning, PreparedCode } from "./code-intake.js";
export { GuardViolationError, scanSkillCode } from "./content-guard.js";
export { GUARD_RULES } from "./guard-rules.js";
export { normalizeSkillCode } from "./normalize-code.js";
export { type ContentGuardMode, NormalizingGuardedIntake } from "./normalizing-guarded-intake.js";
export { CPythonSyntaxChecker, DEBIAN_PYTHON, type PythonSyntaxChecker } from "./python-syntax.js";
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
