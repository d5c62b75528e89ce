import { FailedPreconditionError, InvalidArgumentError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { changeableLesson, mustGet, type PlaybookCore, viewOf } from "./playbook-core.js";
import { type LessonView, PLAYBOOK_LIMITS } from "./playbook-types.js";
import { type VerificationRun, verificationOutcome } from "./retention.js";

/** VerifyLesson: verified only when the outcome strictly improves; a verified lesson stays verified. */
export function verifyLesson(
  core: PlaybookCore,
  lessonId: string,
  run: VerificationRun,
  caller: Caller,
): { lesson: LessonView; reason: string } {
  for (const [field, attempts, passed] of [
    ["original_attempts", run.originalAttempts, run.originalPassed],
    ["verify_attempts", run.verifyAttempts, run.verifyPassed],
  ] as const) {
    if (!Number.isInteger(attempts) || attempts > PLAYBOOK_LIMITS.maxAttempts) {
      throw new InvalidArgumentError(field, `must be an integer in [0, ${PLAYBOOK_LIMITS.maxAttempts}], got ${attempts}`);
    }
    if (passed && attempts < 1) throw new InvalidArgumentError(field, "must be at least 1 for a run that passed");
  }
  const lesson = changeableLesson(core, lessonId, caller);
  if (lesson.state === "deleted") throw new FailedPreconditionError(`lesson "${lessonId}" is deleted; restore it first`);
  const outcome = verificationOutcome(run);
  const verified = lesson.verified || outcome.verified;
  const reason = !outcome.verified && lesson.verified ? `${outcome.reason}; it stays verified from an earlier run` : outcome.reason;
  core.store.update({ ...lesson, verified, updatedAt: core.clock() });
  core.mirror.schedule();
  core.logger.info({ lesson: lessonId, verified, reason }, "lesson verification recorded");
  return { lesson: viewOf(core, mustGet(core, lessonId)), reason };
}
