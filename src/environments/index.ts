/**
 * Environments for skills that need packages (docs/packages.md): declarations checked and
 * normalised, content-addressed ids, builds with pip (binary wheels only) and apt on the host,
 * locks, the `skill_environments` table and the service over them. The only way in.
 */
export { type BuildRequest, type BuiltEnvironment, type EnvironmentRuntime } from "./environment-builder.js";
export { ENVIRONMENT_ID_LENGTH, environmentId, isEnvironmentId } from "./environment-id.js";
export { type EnvironmentLock, type LockedFile, parseLock, serializeLock } from "./environment-lock.js";
export { DEFAULT_ENVIRONMENT_SETTINGS, ENVIRONMENT_MOUNT, type EnvironmentSettings } from "./environment-settings.js";
export { type EnvironmentRecord, type EnvironmentStatus } from "./environment-store.js";
export {
  containerEnvironment,
  type EnsuredEnvironment,
  type EnvironmentEvents,
  Environments,
  type EnvironmentsOptions,
  type EnvironmentSummary,
  type RebuildOutcome,
  type SandboxImageInfo,
} from "./environments.js";
export {
  MAX_REQUIREMENT_LENGTH,
  MAX_REQUIREMENTS,
  MAX_SYSTEM_PACKAGES,
  normalizeDistributionName,
  normalizePackageDeclarations,
  normalizeRequirements,
  normalizeSystemPackages,
  type PackageDeclarations,
} from "./package-declarations.js";
export { type BuildFailureReason, EnvironmentBuildError } from "./pip-installer.js";
export { type RuntimeCheck } from "./runtime-check.js";
