import { InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import type { LessonRecord } from "./lesson.js";
import { mustGet, type PlaybookCore, unindexLessons, viewOf } from "./playbook-core.js";
import type { LessonView } from "./playbook-types.js";
import { pruneSelection } from "./retention.js";

export interface PruneRequest {
  readonly minRetrievals: number;
  readonly maxDropFraction: number | undefined;
  readonly dryRun: boolean;
}

/**
 * PruneLessons: archives non-verified, unpinned lessons surfaced at least `minRetrievals` times
 * and never helpful, at most `maxDropFraction` of each playbook per call (an admin's call
 * prunes every agent's playbook, each on its own budget).
 */
export async function pruneLessons(core: PlaybookCore, request: PruneRequest, caller: Caller): Promise<LessonView[]> {
  const minRetrievals = request.minRetrievals === 0 ? core.policy.pruneMinRetrievals : request.minRetrievals;
  const maxDropFraction = request.maxDropFraction ?? core.policy.pruneMaxDropFraction;
  if (!(maxDropFraction > 0 && maxDropFraction <= 1)) {
    throw new InvalidArgumentError("max_drop_fraction", `must be in (0, 1], got ${maxDropFraction}`);
  }
  const now = core.clock();
  const owners = caller.admin ? core.store.owners() : [caller.agentId];
  const dropped: LessonRecord[] = [];
  for (const owner of owners) {
    dropped.push(...pruneSelection(core.store.list(owner, ["active"]), { minRetrievals, maxDropFraction }, now, core.policy));
  }
  if (!request.dryRun && dropped.length > 0) {
    core.store.transaction("prune lessons", () => {
      for (const lesson of dropped) core.store.setState(lesson.id, "archived", "pruned", now);
    });
    await unindexLessons(
      core,
      dropped.map((l) => l.id),
    );
    core.mirror.schedule();
    core.events.pruned?.(dropped.length);
    core.logger.info({ dropped: dropped.map((l) => l.id), agent: caller.agentId }, "pruned lessons");
  }
  return dropped.map((l) => viewOf(core, request.dryRun ? l : mustGet(core, l.id), now));
}
