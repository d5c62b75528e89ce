/** The control plane: intake, registry, canonical store, telemetry. The only way in. */
export { CanonicalStore } from "./canonical-store.js";
export { MirrorWriter } from "./mirror-writer.js";
export { reconcile, type ReconcileReport } from "./reconcile.js";
export { SkillRegistry, type SkillRecord, type SkillStatus } from "./skill-registry.js";
export {
  SkillService,
  type CallContext,
  type InvocationResult,
  type RegistrationResult,
  type SkillWithCode,
} from "./skill-service.js";
export { LIMITS, SKILL_NAME_PATTERN } from "./request-validation.js";
