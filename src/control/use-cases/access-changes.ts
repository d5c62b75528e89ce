import { InvalidArgumentError } from "../../errors/index.js";
import { agentIdProblem } from "../../identity/index.js";
import { requireAdmin, SkillSharing } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import { validateSkillName } from "../intake/index.js";
import type { SkillRecord, SkillVisibility } from "../registry/index.js";
import type { SkillCore } from "./skill-core.js";

/**
 * Who may see and who owns a skill (docs/security.md#grants-and-visibility): SetSkillVisibility,
 * TransferSkill, and the grants and on/off switch of {@link SkillSharing}, under the same per-name
 * lock as every other change.
 */
export class AccessChanges {
  /** Grants, revocations and the on/off switch. */
  readonly sharing: SkillSharing;

  constructor(private readonly core: SkillCore) {
    this.sharing = new SkillSharing({
      registry: core.registry,
      logger: core.logger,
      now: core.now,
      lock: (name, work) => core.locked(name, work),
      changed: async (skill) => {
        await core.afterChange(skill);
      },
    });
  }

  /** Makes a skill private or public; its owner's or an admin's call. */
  async setVisibility(input: { readonly name: string; readonly visibility: SkillVisibility }, context: CallContext): Promise<SkillRecord> {
    const { core } = this;
    const { name, visibility } = input;
    validateSkillName(name);
    return core.locked(name, async () => {
      const skill = core.lookup.manageable(name, context.caller, "change the visibility of");
      if (skill.visibility === visibility) return skill;
      const updated = await core.afterChange(core.registry.setAccess(name, { owner: skill.owner, visibility }, core.now()));
      core.logger.info(
        { skill: name, from: skill.visibility, to: visibility, agent: context.caller.agentId, requestId: context.requestId },
        "skill visibility changed",
      );
      return updated;
    });
  }

  /** Gives a skill to another agent (admins only), e.g. the local agent's skills once tokens exist. */
  async transfer(input: { readonly name: string; readonly newOwner: string }, context: CallContext): Promise<SkillRecord> {
    const { core } = this;
    const { name, newOwner } = input;
    requireAdmin(context.caller, "TransferSkill");
    validateSkillName(name);
    const ownerProblem = agentIdProblem(newOwner);
    if (ownerProblem) throw new InvalidArgumentError("new_owner", ownerProblem);
    return core.locked(name, async () => {
      const skill = core.lookup.existing(name);
      if (skill.owner === newOwner) return skill;
      const updated = await core.afterChange(core.registry.setAccess(name, { owner: newOwner, visibility: skill.visibility }, core.now()));
      core.logger.warn(
        { skill: name, from: skill.owner, to: newOwner, agent: context.caller.agentId, requestId: context.requestId },
        "skill transferred",
      );
      return updated;
    });
  }
}
