import type { Caller } from "../../identity/index.js";
import type { SkillRecord } from "../registry/index.js";
import { canSee, type SkillAccessView } from "./skill-access.js";

/**
 * The dependents of a skill as one caller may learn of them (docs/security.md#dependents-you-cannot-see):
 * the ones it may see by name, the others only as a count. A dependent's name, like its code, belongs
 * to whoever may see it; the owner of a dependency learns that something depends on it, not what.
 */
export interface DependentsInView {
  readonly named: readonly string[];
  readonly hidden: number;
}

export function dependentsInView(dependents: readonly (SkillAccessView & Pick<SkillRecord, "name">)[], caller: Caller): DependentsInView {
  const named: string[] = [];
  let hidden = 0;
  for (const dependent of dependents) {
    if (canSee(dependent, caller)) named.push(dependent.name);
    else hidden++;
  }
  return { named, hidden };
}

/** How many dependents there are in all. */
export function dependentCount(view: DependentsInView): number {
  return view.named.length + view.hidden;
}

/** "a, b and 2 skills you cannot see": the subject of a message about dependents (one at least). */
export function describeDependents(view: DependentsInView): string {
  const unseen = `${view.hidden} skill${view.hidden === 1 ? "" : "s"} you cannot see`;
  if (view.hidden === 0) return view.named.join(", ");
  if (view.named.length === 0) return unseen;
  return `${view.named.join(", ")} and ${unseen}`;
}
