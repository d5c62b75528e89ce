import { FailedPreconditionError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { applyCap, changeableLesson, indexLessons, mustGet, type PlaybookCore, unindexLessons, viewOf } from "./playbook-core.js";
import type { LessonView } from "./playbook-types.js";

/** SetLessonPinned: the head pin, kept first by the cap and never pruned. */
export function setLessonPinned(core: PlaybookCore, lessonId: string, pinned: boolean, caller: Caller): LessonView {
  const lesson = changeableLesson(core, lessonId, caller);
  if (lesson.pinned !== pinned) {
    core.store.update({ ...lesson, pinned, updatedAt: core.clock() });
    core.mirror.schedule();
  }
  return viewOf(core, mustGet(core, lessonId));
}

/** DeleteLesson: soft; the lesson leaves retrieval and can be restored. */
export async function deleteLesson(core: PlaybookCore, lessonId: string, caller: Caller): Promise<LessonView> {
  const lesson = changeableLesson(core, lessonId, caller);
  if (lesson.state === "deleted") throw new FailedPreconditionError(`lesson "${lessonId}" is already deleted`);
  core.store.setState(lessonId, "deleted", "", core.clock());
  await unindexLessons(core, [lessonId]);
  core.mirror.schedule();
  return viewOf(core, mustGet(core, lessonId));
}

/** RestoreLesson: an archived or deleted lesson comes back into the playbook (the cap then applies). */
export async function restoreLesson(
  core: PlaybookCore,
  lessonId: string,
  caller: Caller,
): Promise<{ lesson: LessonView; archived: string[] }> {
  const lesson = changeableLesson(core, lessonId, caller);
  if (lesson.state === "active") throw new FailedPreconditionError(`lesson "${lessonId}" is already in the playbook`);
  const [vector] = await core.embedder.embed([lesson.trigger]);
  const now = core.clock();
  const archived = core.store.transaction("restore a lesson", () => {
    core.store.setState(lessonId, "active", "", now);
    return applyCap(core, lesson.owner, now).map((l) => l.id);
  });
  if (!archived.includes(lessonId)) await indexLessons(core, [mustGet(core, lessonId)], vector ? [vector] : undefined);
  await unindexLessons(
    core,
    archived.filter((id) => id !== lessonId),
  );
  core.mirror.schedule();
  return { lesson: viewOf(core, mustGet(core, lessonId)), archived };
}
