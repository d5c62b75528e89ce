import { PermissionDeniedError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import type { SkillGrant, SkillRecord } from "../registry/index.js";

/** What the access rules read of a skill. */
export type SkillAccessView = Pick<SkillRecord, "owner" | "visibility" | "system" | "grants">;

/**
 * The access table (docs/security.md#the-access-table): admins see everything; an agent sees its
 * own skills, public and system skills, skills granted to it, and skills granted to the end user
 * it acts for (x-user-id, delegating agents only). Everything else does not exist for it.
 */
export function canSee(skill: SkillAccessView, caller: Caller): boolean {
  return (
    caller.admin || skill.owner === caller.agentId || skill.visibility === "public" || skill.system || grantFor(skill, caller) !== undefined
  );
}

/** Only the owner and admins change a skill; a system skill only admins (docs/security.md#system-skills). */
export function canManage(skill: Pick<SkillRecord, "owner" | "system">, caller: Caller): boolean {
  return caller.admin || (!skill.system && skill.owner === caller.agentId);
}

/**
 * The grant through which `caller` sees a skill: its own agent grant first, then its user's.
 * Owners and admins need none and get none (they always follow the active version).
 */
export function grantFor(skill: Pick<SkillRecord, "owner" | "grants">, caller: Caller): SkillGrant | undefined {
  if (caller.admin || skill.owner === caller.agentId) return undefined;
  return (
    skill.grants.find((g) => g.granteeKind === "agent" && g.grantee === caller.agentId) ??
    (caller.userId === undefined ? undefined : skill.grants.find((g) => g.granteeKind === "user" && g.grantee === caller.userId))
  );
}

/** The version `caller` is pinned to by a grant (docs/security.md#pinned-grants); undefined: the active one. */
export function pinnedVersionFor(skill: Pick<SkillRecord, "owner" | "grants">, caller: Caller): number | undefined {
  return grantFor(skill, caller)?.version;
}

/** PERMISSION_DENIED for a visible skill the caller may not change. */
export function notYoursError(
  name: string,
  skill: Pick<SkillRecord, "owner" | "system">,
  action: string,
  caller: Caller,
): PermissionDeniedError {
  if (skill.system) {
    return new PermissionDeniedError(
      caller.agentId,
      `cannot ${action} "${name}": it is a system skill, which only admins change (docs/security.md#system-skills)`,
    );
  }
  return new PermissionDeniedError(
    caller.agentId,
    `cannot ${action} "${name}": it belongs to agent "${skill.owner}"; only its owner or an admin can`,
  );
}

/** Operator-only calls (wipe the sandbox, transfer skills, rebuild indexes, register system skills). */
export function requireAdmin(caller: Caller, action: string): void {
  if (!caller.admin) {
    throw new PermissionDeniedError(
      caller.agentId,
      `${action} is for admins; agent "${caller.agentId}" does not have the admin role (see SKILL_ENGINE_TOKENS_FILE)`,
    );
  }
}
