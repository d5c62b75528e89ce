import { AlreadyExistsError, FailedPreconditionError, InvalidArgumentError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import { canManage, canSee, notYoursError } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { SkillKind } from "../composition/index.js";
import type { NeighboursOf, OnDuplicate, SimilarSkillReport, SkillText } from "../duplicate-screen.js";
import type { SkillAccess, SkillRecord, SkillVisibility } from "../registry/index.js";
import type { SkillCore } from "./skill-core.js";

/** Example queries a registration may carry for routing. */
export const EXAMPLE_QUERY_LIMITS = { count: 20, chars: 500 } as const;

/**
 * Owner and visibility of the version a registration commits. Names are global (the canonical
 * store is laid out by name), so a name held by another agent's skill, in any status, is
 * refused: PERMISSION_DENIED when the caller can see that skill, else ALREADY_EXISTS, which
 * says the name is taken and nothing else about it. `visibility` undefined: private for a new
 * skill, unchanged for an existing one.
 */
export function accessForRegistration(
  existing: SkillRecord | undefined,
  request: { readonly name: string; readonly visibility: SkillVisibility | undefined },
  caller: Caller,
): SkillAccess {
  const { name, visibility } = request;
  if (!existing) return { owner: caller.agentId, visibility: visibility ?? "private" };
  if (!canManage(existing, caller)) {
    if (canSee(existing, caller)) throw notYoursError(name, existing, "register a new version of", caller);
    throw new AlreadyExistsError(`the name "${name}" is taken by another agent's skill; choose another name`);
  }
  return { owner: existing.owner, visibility: visibility ?? existing.visibility };
}

/** A name keeps its kind: a plain skill's name cannot become a composition's, nor the reverse. */
export function refuseKindChange(core: SkillCore, existing: SkillRecord | undefined, kind: SkillKind): void {
  if (!existing) return;
  core.refuseFolderSkill(existing.name, "register");
  const current = core.composition.declaredOf(existing).kind;
  if (current !== kind) {
    throw new FailedPreconditionError(
      `"${existing.name}" is a ${current} skill and a name keeps its kind: register the ${kind} skill under another name`,
    );
  }
}

export function checkExampleQueries(exampleQueries: readonly string[]): void {
  if (exampleQueries.length > EXAMPLE_QUERY_LIMITS.count) {
    throw new InvalidArgumentError("example_queries", `has ${exampleQueries.length} entries; the limit is ${EXAMPLE_QUERY_LIMITS.count}`);
  }
  const tooLong = exampleQueries.findIndex((q) => q.length > EXAMPLE_QUERY_LIMITS.chars);
  if (tooLong >= 0) {
    throw new InvalidArgumentError(`example_queries[${tooLong}]`, `is longer than ${EXAMPLE_QUERY_LIMITS.chars} characters`);
  }
}

/**
 * The skills a new one is compared with (docs/learning.md#near-duplicates): the caller's visible
 * skills nearest the new description in routing's vector index, so a registration's cost does not
 * grow with the library. Without an index, or when it cannot answer (logged), every visible skill.
 */
function neighboursFor(core: SkillCore, context: CallContext): NeighboursOf {
  const { registry, indexer, logger } = core;
  const scope = core.listScope(context);
  return async (vector, limit) => {
    if (indexer?.nearestSkills) {
      try {
        const names = await indexer.nearestSkills(vector, context.caller, limit);
        const described = new Map(registry.describedSkillsNamed(names, scope).map((skill) => [skill.name, skill]));
        return names.flatMap((name) => described.get(name) ?? []);
      } catch (error) {
        logger.warn({ err: error }, "the routing index could not name near-duplicate candidates; comparing with every visible skill");
      }
    }
    return registry.describedSkills(scope);
  };
}

/**
 * Near-duplicates at the door (docs/learning.md#near-duplicates), for every kind of registration
 * (plain, composed, directory, import): compares the new skill with every other skill the caller
 * can see; "reject" refuses a near-duplicate with ALREADY_EXISTS. An embedder that cannot answer
 * is logged and screens nothing: registration never depends on it.
 */
export async function screenDuplicates(
  core: SkillCore,
  request: { readonly skill: SkillText; readonly onDuplicate: OnDuplicate },
  context: CallContext,
): Promise<SimilarSkillReport[]> {
  const { duplicates, store, logger } = core;
  const { skill, onDuplicate } = request;
  if (!duplicates) return [];
  let similar: SimilarSkillReport[];
  try {
    similar = await duplicates.screen(skill, neighboursFor(core, context), async (name) => (await store.readActive(name)) ?? "");
  } catch (error) {
    logger.error({ err: error, skill: skill.name }, "could not look for near-duplicates; registering without");
    return [];
  }
  const near = similar.find((s) => s.nearDuplicate);
  if (near && onDuplicate === "reject") {
    duplicates.recordVerdict?.("rejected");
    throw new AlreadyExistsError(
      `near-duplicate of ${near.name}: patch ${near.name} instead (description similarity ${near.descriptionSimilarity}, code similarity ${near.codeSimilarity})`,
    );
  }
  if (near) duplicates.recordVerdict?.("warned");
  return similar;
}
