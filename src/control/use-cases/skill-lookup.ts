import { FailedPreconditionError, SkillNotFoundError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import { canManage, canSee, notYoursError } from "../access/index.js";
import { validateSkillName } from "../intake/index.js";
import { isLive, type SkillRecord, type SkillRegistry } from "../registry/index.js";

/**
 * Finds a skill as a caller may see it (docs/security.md#the-access-table). Every use case looks
 * skills up through it, and routing's feedback too, so that "not yours to see" answers exactly as
 * "no such skill" everywhere.
 */
export class SkillLookup {
  constructor(private readonly registry: SkillRegistry) {}

  /** A skill of any status, whoever owns it; NOT_FOUND when there is none. */
  existing(name: string): SkillRecord {
    validateSkillName(name);
    const skill = this.registry.get(name);
    if (!skill) throw new SkillNotFoundError(name);
    return skill;
  }

  /** A skill the caller may see; anybody else's private skill is NOT_FOUND, exactly like no skill. */
  visible(name: string, caller: Caller): SkillRecord {
    const skill = this.existing(name);
    if (!canSee(skill, caller)) throw new SkillNotFoundError(name);
    return skill;
  }

  /** A skill the caller may change: PERMISSION_DENIED for another agent's public skill. */
  manageable(name: string, caller: Caller, action: string): SkillRecord {
    const skill = this.visible(name, caller);
    if (!canManage(skill, caller)) throw notYoursError(name, skill, action, caller);
    return skill;
  }
}

/** A skill that can run: retired and deleted ones answer FAILED_PRECONDITION with the way back. */
export function liveSkill(skill: SkillRecord, action: string): SkillRecord {
  if (!isLive(skill.status)) {
    const why = skill.statusReason ? ` (${skill.statusReason})` : "";
    throw new FailedPreconditionError(`cannot ${action} "${skill.name}": it is ${skill.status}${why}; RestoreSkill brings it back`);
  }
  return skill;
}
