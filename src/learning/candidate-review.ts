import type { CallContext, SkillRecord } from "../control/index.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../errors/index.js";
import { evolutionTarget } from "./evolution.js";
import type { LearningDeps } from "./learning-deps.js";
import type { CandidateRecord, CandidateStatus, EvolutionRecord } from "./learning-store.js";
import { promotionPlan } from "./promotion-plan.js";

export interface Promotion {
  readonly candidate: CandidateRecord;
  readonly skill: SkillRecord;
  readonly evolution: EvolutionRecord | undefined;
}

/**
 * What an agent decides about its candidates (docs/learning.md#candidates): list them, dismiss one,
 * or promote one to a composed skill. Every candidate is seen only by the agent whose sessions made it.
 */
export class CandidateReview {
  private readonly promoting = new Set<number>();

  constructor(private readonly deps: LearningDeps) {}

  list(status: CandidateStatus | undefined, context: CallContext): CandidateRecord[] {
    return this.deps.store.candidates(context.caller.agentId, status);
  }

  dismiss(id: number, context: CallContext): CandidateRecord {
    const candidate = this.ownCandidate(id, context);
    if (candidate.status === "promoted") {
      throw new FailedPreconditionError(`candidate ${id} was already promoted to "${candidate.skillName}"; delete that skill instead`);
    }
    const dismissed = this.deps.store.transaction("dismiss a candidate", () => this.deps.store.setStatus(id, "dismissed", undefined, ""));
    this.deps.mirror?.schedule();
    return dismissed;
  }

  /**
   * PromoteCandidate (docs/learning.md#promotion): a composed skill of the candidate's tools, or, when
   * its sequence overlaps an auto-created skill of the same agent by the evolution threshold, a new
   * version of that skill (docs/learning.md#evolution).
   */
  async promote(id: number, overrides: { name?: string; description?: string }, context: CallContext): Promise<Promotion> {
    const candidate = this.ownCandidate(id, context);
    if (candidate.status !== "candidate") {
      throw new FailedPreconditionError(
        `candidate ${id} is ${candidate.status}${candidate.skillName ? ` ("${candidate.skillName}")` : ""}`,
      );
    }
    if (this.promoting.has(id)) throw new FailedPreconditionError(`candidate ${id} is being promoted by another call`);
    this.promoting.add(id);
    try {
      const { store, skills, registry } = this.deps;
      const visible = new Map(skills.queries.list({}, context).map((s) => [s.name, s]));
      const missing = candidate.toolSequence.map((s) => s.tool).filter((tool) => !visible.has(tool));
      if (missing.length > 0) {
        throw new FailedPreconditionError(
          `cannot promote candidate ${id}: tool "${missing[0]}" is not a skill you can invoke` +
            `${missing.length > 1 ? ` (nor ${[...new Set(missing.slice(1))].map((m) => `"${m}"`).join(", ")})` : ""}; register it first or dismiss the candidate`,
        );
      }
      const target = evolutionTarget(candidate, context, this.deps);
      const plan = promotionPlan(candidate.toolSequence, candidate.exampleArguments);
      const name = target?.skill.name ?? (overrides.name?.trim() || candidate.name);
      const description = overrides.description?.trim() || candidate.description;
      const registered = await skills.composedRegistration.register(
        {
          name,
          description,
          parametersSchema: plan.parametersSchema,
          steps: plan.steps,
          output: "",
          testPayload: plan.testPayload,
          // An evolution is a new version of the same skill, never a duplicate of it.
          onDuplicate: "warn",
        },
        context,
      );
      const at = this.deps.now();
      const skill = registry.markAutoCreated(registered.skill.name, at);
      const result = store.transaction("record a promotion", () => {
        const promoted = store.setStatus(id, "promoted", at.toISOString(), skill.name);
        const evolution = target
          ? store.addEvolution({
              agentId: context.caller.agentId,
              skillName: skill.name,
              fromVersion: target.skill.version,
              toVersion: skill.version,
              candidateId: id,
              overlap: target.overlap,
              summary: `sequence ${target.from.map((s) => s.tool).join(" → ")} became ${candidate.toolSequence.map((s) => s.tool).join(" → ")}`,
              at: at.toISOString(),
            })
          : undefined;
        return { candidate: promoted, skill, evolution };
      });
      this.deps.events?.promoted?.(target !== undefined);
      this.deps.mirror?.schedule();
      this.deps.logger.info(
        { candidate: id, skill: skill.name, version: skill.version, evolved: target !== undefined, agent: context.caller.agentId },
        target ? "auto-created skill evolved" : "candidate promoted",
      );
      return result;
    } finally {
      this.promoting.delete(id);
    }
  }

  private ownCandidate(id: number, context: CallContext): CandidateRecord {
    if (!Number.isInteger(id) || id <= 0) throw new InvalidArgumentError("id", "must be a candidate id (ListCandidates)");
    const candidate = this.deps.store.candidate(id);
    // Another agent's candidate answers exactly as one that does not exist.
    if (!candidate || candidate.agentId !== context.caller.agentId) throw new NotFoundError(`no candidate ${id}`);
    return candidate;
  }
}
