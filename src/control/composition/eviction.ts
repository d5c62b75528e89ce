import type { SkillRecord } from "../registry/index.js";
import type { CompositionCore } from "./composition-core.js";

/**
 * Composed skills of `owner` to retire so that one more fits (docs/composition.md#eviction):
 * fewest invocations first, then the oldest last use (never used: its creation), then name.
 * Protected skills and skills other live skills depend on are never evicted (nothing breaks
 * silently); `except` is the name being registered.
 */
export function evictionVictims(core: CompositionCore, owner: string, except: string, now: Date): SkillRecord[] {
  const composed = core.registry.list({ owner }).filter((skill) => skill.name !== except && core.isComposed(skill));
  const excess = composed.length - core.settings.composedSkillsPerAgent + 1;
  if (excess <= 0) return [];
  const ranked = composed
    .filter((skill) => !skill.protected && core.dependents(skill.name).length === 0)
    .map((skill) => ({
      skill,
      invocations: core.registry.usage(skill.name, skill.version, now).totalInvocations,
      lastUse: (skill.lastInvokedAt ?? skill.createdAt).getTime(),
    }))
    .sort((a, b) => a.invocations - b.invocations || a.lastUse - b.lastUse || a.skill.name.localeCompare(b.skill.name));
  return ranked.slice(0, excess).map((r) => r.skill);
}
