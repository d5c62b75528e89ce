import { PermissionDeniedError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import type { SkillAccess } from "../registry/index.js";

/**
 * The access rules (docs/security.md#owners-and-visibility), reduced to owner and visibility: a private skill is its owner's (and
 * the admins'), a public one every agent's to see, route to and invoke. Only the owner and
 * admins change a skill.
 */
export function canSee(skill: SkillAccess, caller: Caller): boolean {
  return caller.admin || skill.owner === caller.agentId || skill.visibility === "public";
}

export function canManage(skill: SkillAccess, caller: Caller): boolean {
  return caller.admin || skill.owner === caller.agentId;
}

/** PERMISSION_DENIED for a visible skill the caller may not change. */
export function notYoursError(name: string, owner: string, action: string, caller: Caller): PermissionDeniedError {
  return new PermissionDeniedError(
    caller.agentId,
    `cannot ${action} "${name}": it belongs to agent "${owner}"; only its owner or an admin can`,
  );
}

/** Operator-only calls (wipe the sandbox, transfer skills, rebuild indexes). */
export function requireAdmin(caller: Caller, action: string): void {
  if (!caller.admin) {
    throw new PermissionDeniedError(
      caller.agentId,
      `${action} is for admins; agent "${caller.agentId}" does not have the admin role (see SKILL_ENGINE_TOKENS_FILE)`,
    );
  }
}
