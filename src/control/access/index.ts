/** Access: who may see and who may change a skill, grants, pins, the on/off switch, secrets' names and redaction, and declared hosts. The only way in. */
export { canManage, canSee, grantFor, notYoursError, pinnedVersionFor, requireAdmin, type SkillAccessView } from "./skill-access.js";
export { type DependentsInView, dependentCount, dependentsInView, describeDependents } from "./dependents-in-view.js";
export { disabledError, type GranteeInput, SkillSharing, type SkillSharingDependencies } from "./skill-sharing.js";
export { MAX_DECLARED_SECRETS, SECRET_NAME_PATTERN, validateSecretNames } from "./secret-names.js";
export { canonicalHost, uncoveredHost, validateNetworkAllow, withNetworkHint } from "./network-declarations.js";
export { MIN_REDACTED_PREFIX, redactionMark, redactResult, SecretRedactor } from "./secret-redaction.js";
