import { errorMessage } from "../../errors/index.js";
import { requireAdmin } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { SkillCore } from "./skill-core.js";

/** What RebuildIndexes did. */
export interface RebuildIndexesReport {
  readonly skillsIndexed: number;
  /** Canonical files rewritten from history, and skills that could not be repaired. */
  readonly repairs: string[];
}

/** An operator's repairs without a restart (docs/operations.md): the sandbox wipe and the index rebuild; admins only. */
export class Operations {
  constructor(private readonly core: SkillCore) {}

  /** Removes every run directory (what `rm -rf` of the sandbox dir does); returns how many. */
  async wipeSandbox(context: CallContext): Promise<number> {
    requireAdmin(context.caller, "WipeSandbox");
    const { removedRunDirectories } = await this.core.sandbox.wipe();
    this.core.logger.warn(
      { removedRunDirectories, agent: context.caller.agentId, requestId: context.requestId },
      "sandbox wiped by request",
    );
    return removedRunDirectories;
  }

  /**
   * Every skill's canonical file checked against the registry (rewritten from history when missing
   * or altered), the mirror rewritten, routing re-indexed. Each skill is checked under its own
   * lock, so calls keep being served meanwhile.
   */
  async rebuildIndexes(context: CallContext): Promise<RebuildIndexesReport> {
    const { core } = this;
    requireAdmin(context.caller, "RebuildIndexes");
    const repairs: string[] = [];
    for (const { name } of core.registry.list({ includeInactive: true })) {
      await core.locked(name, async () => {
        const skill = core.registry.get(name);
        if (!skill) return;
        try {
          const { restored } = await core.readActiveCode(skill);
          if (restored) repairs.push(`${name}: canonical file rewritten from v${skill.version} in its history`);
        } catch (error) {
          repairs.push(`${name}: ${errorMessage(error)}`);
        }
      });
    }
    await core.mirror.rewriteAll();
    const skillsIndexed = core.indexer ? await core.indexer.reindexAll() : 0;
    core.logger.warn({ skillsIndexed, repairs, agent: context.caller.agentId, requestId: context.requestId }, "indexes rebuilt by request");
    return { skillsIndexed, repairs };
  }
}
