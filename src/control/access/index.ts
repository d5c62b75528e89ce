/** Access: who may see and who may change a skill, grants, pins and the on/off switch. The only way in. */
export { canManage, canSee, grantFor, notYoursError, pinnedVersionFor, requireAdmin, type SkillAccessView } from "./skill-access.js";
export { type DependentsInView, dependentCount, dependentsInView, describeDependents } from "./dependents-in-view.js";
export { disabledError, type GranteeInput, SkillSharing, type SkillSharingDependencies } from "./skill-sharing.js";
