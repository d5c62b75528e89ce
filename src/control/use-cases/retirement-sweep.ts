import { canManage, dependentCount, dependentsInView, describeDependents } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import { retirementReasons } from "../registry/index.js";
import { locationOf } from "../store/index.js";
import type { SkillCore } from "./skill-core.js";

export interface RetiredSkill {
  readonly name: string;
  readonly reasons: string[];
}

export interface RetirementSweepInput {
  /** Only reports what would be retired. */
  readonly dryRun: boolean;
  /** Retires skills that live skills depend on too. @default false */
  readonly force?: boolean;
}

export interface RetirementSweepReport {
  readonly retired: RetiredSkill[];
  /** Skills the rule would retire that their dependents kept (only without `force`). */
  readonly kept: RetiredSkill[];
}

/**
 * The retirement sweep (docs/skill-lifecycle.md#retirement-rule) over the skills the caller manages
 * (all of them for admins): RetireDegradedSkills, and the periodic sweep as a service caller.
 */
export class RetirementSweep {
  constructor(private readonly core: SkillCore) {}

  async sweep(input: RetirementSweepInput, context: CallContext): Promise<RetirementSweepReport> {
    const { core } = this;
    const { dryRun, force = false } = input;
    const retired: RetiredSkill[] = [];
    const kept: RetiredSkill[] = [];
    // A system skill is retired by admins only (docs/security.md#system-skills).
    const candidates = core.registry
      .list(context.caller.admin ? {} : { owner: context.caller.agentId })
      .filter((skill) => canManage(skill, context.caller));
    for (const candidate of candidates) {
      const outcome = await core.locked(candidate.name, async () => {
        const skill = core.registry.get(candidate.name);
        if (!skill) return undefined;
        const reasons = retirementReasons(skill, core.policy);
        if (reasons.length === 0) return undefined;
        const dependents = core.composition.dependents(skill.name);
        if (dependents.length > 0 && !force) {
          // `kept` goes back to the caller: dependents it may not see are counted, not named.
          const view = dependentsInView(dependents, context.caller);
          const verb = dependentCount(view) === 1 ? "depends" : "depend";
          kept.push({
            name: skill.name,
            reasons: [...reasons, `kept: ${describeDependents(view)} ${verb} on it (force retires it anyway)`],
          });
          return undefined;
        }
        if (!dryRun) {
          const retiredSkill = core.registry.setStatus(skill.name, "retired", reasons.join("; "), core.now());
          await core.store.moveSkill(skill.name, locationOf(skill.status), "retired", core.now());
          await core.reindex(retiredSkill);
          core.logger.warn({ skill: skill.name, reasons, agent: context.caller.agentId, requestId: context.requestId }, "skill retired");
        }
        return { name: skill.name, reasons };
      });
      if (outcome) retired.push(outcome);
    }
    if (retired.length > 0 && !dryRun) await core.mirror.flushOrLater();
    return { retired, kept };
  }
}
