import type { CallContext, SkillRecord } from "../control/index.js";
import { type Listing, openPage, type Page, type PageRequest } from "../paging/index.js";
import type { LearningDeps } from "./learning-deps.js";
import type { CandidateRecord, EvolutionRecord } from "./learning-store.js";
import { type SequenceStep, sequenceOverlap } from "./sequence.js";

/** The auto-created skill a promotion makes a new version of, instead of a new skill (docs/learning.md#evolution). */
export interface EvolutionTarget {
  readonly skill: SkillRecord;
  readonly overlap: number;
  /** The skill's current sequence, which the candidate's replaces. */
  readonly from: SequenceStep[];
}

/** The auto-created skill of this agent whose sequence this candidate's overlaps most, at or above the threshold. */
export function evolutionTarget(
  candidate: CandidateRecord,
  context: CallContext,
  deps: Pick<LearningDeps, "store" | "registry" | "policy">,
): EvolutionTarget | undefined {
  const tools = candidate.toolSequence.map((s) => s.tool);
  let best: EvolutionTarget | undefined;
  const seen = new Set<string>();
  for (const promoted of deps.store.promotedSequences(context.caller.agentId)) {
    // The newest promotion of a skill is its current sequence.
    if (seen.has(promoted.skillName)) continue;
    seen.add(promoted.skillName);
    const skill = deps.registry.get(promoted.skillName);
    if (!skill || !skill.autoCreated || skill.owner !== context.caller.agentId) continue;
    if (skill.status === "retired" || skill.status === "deleted") continue;
    const overlap = sequenceOverlap(
      tools,
      promoted.toolSequence.map((s) => s.tool),
    );
    if (overlap >= deps.policy.evolutionOverlap && (!best || overlap > best.overlap)) {
      best = { skill, overlap, from: promoted.toolSequence };
    }
  }
  return best;
}

/** ListSkillEvolution's pages: by event id, oldest first. */
const LIST_EVOLUTION: Listing = { name: "ListSkillEvolution", keyShapes: ["n"] };

/**
 * ListSkillEvolution (docs/learning.md#evolution): the versions promotions made of a skill the caller
 * can see, one keyset page by event id (docs/api.md#pagination).
 */
export function evolutionOf(
  input: { readonly name: string } & PageRequest,
  context: CallContext,
  deps: Pick<LearningDeps, "skills" | "store">,
): Page<EvolutionRecord> {
  const window = openPage<[number]>(LIST_EVOLUTION, { name: input.name }, input);
  deps.skills.queries.versionsPage({ name: input.name, pageSize: 1 }, context); // NOT_FOUND unless the caller may see it
  return window.page(deps.store.evolution(input.name, { after: window.after?.[0] ?? 0, limit: window.fetch }), (event) => [event.id]);
}
