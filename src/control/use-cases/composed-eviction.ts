import type { CallContext } from "../call-context.js";
import { isLive, type SkillRecord } from "../registry/index.js";
import { locationOf } from "../store/index.js";
import type { SkillCore } from "./skill-core.js";

/**
 * Keeps the per-agent cap on live composed skills (docs/composition.md#eviction) once `kept` became
 * live: a new composed skill (RegisterComposedSkill, promotion) or a restored one (RestoreSkill).
 * Retires the owner's least used others past the cap, with reason "evicted"; returns their names.
 * Call it outside `kept`'s lock: it takes each victim's.
 */
export async function evictComposedPastCap(core: SkillCore, kept: SkillRecord, context: CallContext): Promise<string[]> {
  const evicted: string[] = [];
  for (const victim of core.composition.evictionVictims(kept.owner, kept.name, core.now())) {
    await core.locked(victim.name, async () => {
      const current = core.registry.get(victim.name);
      if (!current || !isLive(current.status)) return;
      const reason = `evicted: ${kept.owner} keeps at most ${core.composition.settings.composedSkillsPerAgent} composed skills and this one was the least used`;
      const retired = core.registry.setStatus(current.name, "retired", reason, core.now());
      await core.store.moveSkill(current.name, locationOf(current.status), "retired", core.now());
      await core.reindex(retired);
      evicted.push(current.name);
      core.logger.warn(
        { skill: current.name, for: kept.name, agent: context.caller.agentId, requestId: context.requestId },
        "composed skill evicted",
      );
    });
  }
  if (evicted.length > 0) await core.mirror.flushOrLater();
  return evicted;
}
