/** The playbook: lessons agents learn, their gates, retrieval, credit and retention. The only way in. */
export {
  type ArchiveReason,
  type Clock,
  DEFAULT_LESSON_DOMAINS,
  DEFAULT_PLAYBOOK_POLICY,
  type LessonRecord,
  type LessonState,
  type LessonVisibility,
  PLAYBOOK_HEADER,
  type PlaybookPolicy,
  systemClock,
} from "./lesson.js";
export { LESSON_LIMITS, LessonGateError, type LessonDraft, type LessonGate } from "./lesson-gates.js";
export { LessonStore } from "./lesson-store.js";
export { LESSONS_MIRROR_FILE, LessonsMirrorWriter, readLessonsMirror } from "./lessons-mirror.js";
export {
  LessonNotFoundError,
  type LessonScope,
  type LessonView,
  PLAYBOOK_LIMITS,
  type PlaybookContext,
  type PlaybookEvents,
} from "./playbook-types.js";
export { formatContext } from "./playbook-context.js";
export { type PlaybookServiceOptions } from "./playbook-core.js";
export { PlaybookService } from "./playbook-service.js";
export { createPlaybook, type CreatePlaybookOptions } from "./create-playbook.js";
