/** Access: who may see and who may change a skill. The only way in. */
export { canManage, canSee, notYoursError, requireAdmin } from "./skill-access.js";
