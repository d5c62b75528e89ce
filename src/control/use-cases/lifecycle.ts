import { FailedPreconditionError } from "../../errors/index.js";
import { dependentCount, dependentsInView, describeDependents } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import { validateSkillName } from "../intake/index.js";
import { isLive, type SkillGrant, type SkillRecord } from "../registry/index.js";
import { evictComposedPastCap } from "./composed-eviction.js";
import { locationOf } from "../store/index.js";
import type { SkillCore } from "./skill-core.js";
import { liveSkill } from "./skill-lookup.js";

/** A skill to take out of service; its dependents protect it unless `force`. */
export interface TakeOutInput {
  readonly name: string;
  /** Takes it out even though live skills depend on it (their invocations then fail naming it). @default false */
  readonly force?: boolean;
}

/**
 * A skill's life by hand (docs/skill-lifecycle.md): retire, delete (soft), restore, protect. Each
 * is its owner's or an admin's call, under the skill's lock.
 */
export class Lifecycle {
  constructor(private readonly core: SkillCore) {}

  /**
   * Retires one skill by hand (live skills only): what the retirement rule does, with the caller as
   * the reason (docs/skill-lifecycle.md#retire-by-hand).
   */
  async retire(input: TakeOutInput, context: CallContext): Promise<SkillRecord> {
    const { core } = this;
    const { name, force = false } = input;
    validateSkillName(name);
    return core.locked(name, async () => {
      const skill = liveSkill(core.lookup.manageable(name, context.caller, "retire"), "retire");
      this.protectDependents({ name, action: "retire", force }, context);
      const retired = await core.takeOut(skill, "retired", `retired by ${context.caller.agentId}`);
      core.logger.warn({ skill: name, agent: context.caller.agentId, requestId: context.requestId }, "skill retired by hand");
      return retired;
    });
  }

  async delete(input: TakeOutInput, context: CallContext): Promise<SkillRecord> {
    return (await this.deleteReport(input, context)).skill;
  }

  /**
   * DeleteSkill: a soft delete that also revokes every grant of the skill, as a hard delete would
   * (docs/security.md#delete-revokes-grants), so neither a restore nor a re-registration shares it again silently.
   */
  async deleteReport(input: TakeOutInput, context: CallContext): Promise<{ skill: SkillRecord; revokedGrants: readonly SkillGrant[] }> {
    const { core } = this;
    const { name, force = false } = input;
    validateSkillName(name);
    return core.locked(name, async () => {
      const skill = core.lookup.manageable(name, context.caller, "delete");
      if (skill.status === "deleted") throw new FailedPreconditionError(`"${name}" is already deleted`);
      this.protectDependents({ name, action: "delete", force }, context);
      await core.takeOut(skill, "deleted", `deleted by ${context.caller.agentId}`);
      const { skill: deleted, revoked } = core.registry.revokeAll(name, core.now());
      if (revoked.length > 0) await core.afterChange(deleted);
      core.logger.info(
        { skill: name, revokedGrants: revoked.length, agent: context.caller.agentId, requestId: context.requestId },
        "skill deleted (soft)",
      );
      return { skill: deleted, revokedGrants: revoked };
    });
  }

  async restore(input: { readonly name: string }, context: CallContext): Promise<SkillRecord> {
    return (await this.restoreReport(input, context)).skill;
  }

  /**
   * RestoreSkill: the skill comes back live; a composed one counts against its owner's cap again, so
   * the least used of the owner's other composed skills past it are evicted (docs/composition.md#eviction).
   */
  async restoreReport(input: { readonly name: string }, context: CallContext): Promise<{ skill: SkillRecord; evicted: string[] }> {
    const { core } = this;
    const { name } = input;
    validateSkillName(name);
    const restored = await core.locked(name, async () => {
      const skill = core.lookup.manageable(name, context.caller, "restore");
      if (isLive(skill.status)) {
        throw new FailedPreconditionError(`"${name}" is ${skill.status}, not retired or deleted: nothing to restore`);
      }
      const back = core.registry.restore(name, `restored by ${context.caller.agentId}`, core.now());
      await core.store.moveSkill(name, locationOf(skill.status), "active", core.now());
      await core.afterChange(back);
      core.logger.info({ skill: name, from: skill.status, agent: context.caller.agentId, requestId: context.requestId }, "skill restored");
      return back;
    });
    // Outside the skill's own lock: eviction takes each victim's.
    const evicted = core.composition.isComposed(restored) ? await evictComposedPastCap(core, restored, context) : [];
    return { skill: evicted.length > 0 ? (core.registry.get(name) ?? restored) : restored, evicted };
  }

  /** Pins a skill against the retirement rule (docs/skill-lifecycle.md#protection), or unpins it. */
  async setProtected(input: { readonly name: string; readonly pinned: boolean }, context: CallContext): Promise<SkillRecord> {
    const { core } = this;
    const { name, pinned } = input;
    validateSkillName(name);
    return core.locked(name, async () => {
      core.lookup.manageable(name, context.caller, pinned ? "protect" : "unprotect");
      return core.afterChange(core.registry.setProtected(name, pinned, core.now()));
    });
  }

  /**
   * FAILED_PRECONDITION listing the live dependents of `name`, unless `force` (then each is warned
   * about). Dependents the caller may not see are counted, not named (docs/security.md#dependents-you-cannot-see).
   */
  private protectDependents(request: { name: string; action: string; force: boolean }, context: CallContext): void {
    const { name, action, force } = request;
    const records = this.core.composition.dependents(name);
    const dependents = records.map((d) => d.name);
    if (dependents.length === 0) return;
    if (!force) {
      const view = dependentsInView(records, context.caller);
      const one = dependentCount(view) === 1;
      throw new FailedPreconditionError(
        `cannot ${action} "${name}": ${describeDependents(view)} depend${one ? "s" : ""} on it; ` +
          `change or remove ${one ? "it" : "them"} first, or set force (their invocations then fail naming "${name}")`,
      );
    }
    this.core.logger.warn(
      { skill: name, dependents, agent: context.caller.agentId, requestId: context.requestId },
      `${action} forced: dependents are blocked`,
    );
  }
}
