import type { CallContext, SkillRecord } from "../control/index.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError } from "../errors/index.js";
import { evolutionTarget } from "./evolution.js";
import type { LearningDeps } from "./learning-deps.js";
import type { CandidateRecord, CandidateStatus, EvolutionRecord } from "./learning-store.js";
import { instructionsSkillMd } from "./instructions-plan.js";
import { promotionPlan } from "./promotion-plan.js";
import { type Listing, openPage, type Page, type PageRequest } from "../paging/index.js";

/** ListCandidates' pages: by candidate id. */
const LIST_CANDIDATES: Listing = { name: "ListCandidates", keyShapes: ["n"] };

export interface Promotion {
  readonly candidate: CandidateRecord;
  readonly skill: SkillRecord;
  readonly evolution: EvolutionRecord | undefined;
}

/**
 * What an agent decides about its candidates (docs/learning.md#candidates): list them, dismiss one,
 * or promote one to a skill. Every candidate is seen only by the agent whose sessions made it.
 */
export class CandidateReview {
  private readonly promoting = new Set<number>();

  constructor(private readonly deps: LearningDeps) {}

  list(status: CandidateStatus | undefined, context: CallContext): CandidateRecord[] {
    return this.deps.store.candidates(context.caller.agentId, status);
  }

  /** ListCandidates: one keyset page of {@link list} by id (docs/api.md#pagination). */
  listPage(input: { readonly status: CandidateStatus | undefined } & PageRequest, context: CallContext): Page<CandidateRecord> {
    const window = openPage<[number]>(LIST_CANDIDATES, { status: input.status }, input);
    const rows = this.deps.store.candidates(context.caller.agentId, input.status, { after: window.after?.[0] ?? 0, limit: window.fetch });
    return window.page(rows, (candidate) => [candidate.id]);
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
   * PromoteCandidate (docs/learning.md#promotion): a composed skill of the candidate's tools when each
   * is a skill the agent can invoke, an instructions-only skill describing the routine otherwise; or,
   * when its sequence overlaps an auto-created skill of the same agent and kind by the evolution
   * threshold, a new version of that skill (docs/learning.md#evolution).
   */
  async promote(
    id: number,
    overrides: { name?: string; description?: string },
    context: CallContext,
    /** Auto-promotion makes composed skills only: a routine of the agent's own tools waits for a promotion by hand. */
    options: { composedOnly?: boolean } = {},
  ): Promise<Promotion> {
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
      const { instructions } = this.deps;
      // Only an all-skills sequence has an executable form; any other routine becomes instructions.
      const asInstructions = missing.length > 0;
      if (asInstructions && (!instructions || options.composedOnly)) {
        throw new FailedPreconditionError(
          `cannot promote candidate ${id}${options.composedOnly ? " automatically" : ""}: tool "${missing[0]}" is not a skill you can invoke` +
            `${missing.length > 1 ? ` (nor ${[...new Set(missing.slice(1))].map((m) => `"${m}"`).join(", ")})` : ""}; ` +
            (instructions ? "PromoteCandidate makes it an instructions-only skill" : "register it first or dismiss the candidate"),
        );
      }
      // An evolution keeps the skill's kind: a routine that changed kind becomes a skill of its own.
      const found = evolutionTarget(candidate, context, this.deps);
      const target = found && (instructions?.isInstructions(found.skill.name) ?? false) === asInstructions ? found : undefined;
      const name = target?.skill.name ?? (overrides.name?.trim() || candidate.name);
      const description = overrides.description?.trim() || candidate.description;
      const registered =
        asInstructions && instructions
          ? await instructions.register(
              {
                name,
                description,
                skillMd: instructionsSkillMd(
                  { name, description, sequence: candidate.toolSequence, occurrences: candidate.occurrences },
                  new Set(visible.keys()),
                ),
              },
              context,
            )
          : await this.registerComposed(candidate, name, description, context);
      const at = this.deps.now();
      const skill = registry.markAutoCreated(registered.name, at);
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

  /** The composed skill of an all-skills sequence, through RegisterComposedSkill's pre-flight and test gate. */
  private async registerComposed(
    candidate: CandidateRecord,
    name: string,
    description: string,
    context: CallContext,
  ): Promise<SkillRecord> {
    const plan = promotionPlan(candidate.toolSequence, candidate.exampleArguments);
    const registered = await this.deps.skills.composedRegistration.register(
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
    return registered.skill;
  }

  private ownCandidate(id: number, context: CallContext): CandidateRecord {
    if (!Number.isInteger(id) || id <= 0) throw new InvalidArgumentError("id", "must be a candidate id (ListCandidates)");
    const candidate = this.deps.store.candidate(id);
    // Another agent's candidate answers exactly as one that does not exist.
    if (!candidate || candidate.agentId !== context.caller.agentId) throw new NotFoundError(`no candidate ${id}`);
    return candidate;
  }
}
