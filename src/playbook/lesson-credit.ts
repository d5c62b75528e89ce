import { FailedPreconditionError, InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { mustGet, type PlaybookCore, viewOf, visibleLesson } from "./playbook-core.js";
import { type LessonView, PLAYBOOK_LIMITS } from "./playbook-types.js";

/**
 * CreditRecentRetrievals: the caller's turn succeeded; every lesson it was shown within the
 * window gets one helpful retrieval per showing, each showing credited at most once.
 */
export function creditRecentRetrievals(core: PlaybookCore, windowSeconds: number, caller: Caller): string[] {
  const window = windowSeconds === 0 ? core.policy.creditWindowSeconds : windowSeconds;
  if (!Number.isInteger(window) || window < 1 || window > PLAYBOOK_LIMITS.maxCreditWindowSeconds) {
    throw new InvalidArgumentError(
      "window_seconds",
      `must be in [1, ${PLAYBOOK_LIMITS.maxCreditWindowSeconds}] (0 means ${core.policy.creditWindowSeconds})`,
    );
  }
  const now = core.clock();
  const credited = core.store.creditSince(caller.agentId, now - window * 1000, now);
  if (credited.size > 0) {
    core.mirror.schedule();
    core.events.credited?.([...credited.values()].reduce((a, b) => a + b, 0));
  }
  return [...credited.keys()].sort();
}

/** RecordHelpfulRetrieval: credits the caller's latest uncredited showing of one lesson. */
export function recordHelpfulRetrieval(core: PlaybookCore, lessonId: string, caller: Caller): LessonView {
  const lesson = visibleLesson(core, lessonId, caller);
  if (!core.store.creditLatest(caller.agentId, lesson.id, core.clock())) {
    throw new FailedPreconditionError(
      `lesson "${lessonId}" has no uncredited retrieval by ${caller.agentId}: it counts as helpful only after GetPlaybookContext showed it`,
    );
  }
  core.mirror.schedule();
  core.events.credited?.(1);
  return viewOf(core, mustGet(core, lessonId));
}
