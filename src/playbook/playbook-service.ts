import type { Caller } from "../identity/index.js";
import type { Page } from "../paging/index.js";
import { addLesson } from "./add-lesson.js";
import { creditRecentRetrievals, recordHelpfulRetrieval } from "./lesson-credit.js";
import type { LessonDraft } from "./lesson-gates.js";
import { deleteLesson, restoreLesson, setLessonPinned } from "./lesson-lifecycle.js";
import { listLessons, type ListLessonsRequest } from "./lesson-queries.js";
import { PlaybookContextRetrieval } from "./playbook-context.js";
import { type PlaybookCore, playbookCore, type PlaybookServiceOptions, viewOf, visibleLesson } from "./playbook-core.js";
import { reindexLessons, startPlaybook } from "./playbook-startup.js";
import type { LessonView, PlaybookContext } from "./playbook-types.js";
import { type PruneRequest, pruneLessons } from "./prune-lessons.js";
import type { VerificationRun } from "./retention.js";
import { verifyLesson } from "./verify-lesson.js";

/**
 * The playbook use cases (docs/playbook.md): the gates, storage, retrieval, credit, pruning,
 * retention and the read surface. LLM work (extracting a lesson, re-running the solver to verify
 * it) happens in the agent; this service judges and keeps what the agent reports. A thin front:
 * each use case lives in its own file over the shared {@link PlaybookCore}.
 */
export class PlaybookService {
  private readonly core: PlaybookCore;
  private readonly retrieval: PlaybookContextRetrieval;

  constructor(options: PlaybookServiceOptions) {
    this.core = playbookCore(options);
    this.retrieval = new PlaybookContextRetrieval(this.core);
  }

  /** Start-up: restores lessons from `lessons.json`, re-indexes when needed, rewrites the mirror. */
  async init(): Promise<{ restored: number; reindexed: boolean }> {
    return startPlaybook(this.core);
  }

  /** Re-embeds and re-indexes every active lesson; inactive ones leave both indexes. */
  async reindexAll(): Promise<void> {
    await reindexLessons(this.core);
  }

  async add(draft: LessonDraft, caller: Caller): Promise<{ lesson: LessonView; merged: boolean; archived: string[] }> {
    return addLesson(this.core, draft, caller);
  }

  // The sync use cases stay behind async methods: a refusal reaches callers as a rejected promise, as before.
  async verify(lessonId: string, run: VerificationRun, caller: Caller): Promise<{ lesson: LessonView; reason: string }> {
    return verifyLesson(this.core, lessonId, run, caller);
  }

  async context(query: string, requestedLimit: number, caller: Caller): Promise<PlaybookContext> {
    return this.retrieval.context(query, requestedLimit, caller);
  }

  creditRecent(windowSeconds: number, caller: Caller): string[] {
    return creditRecentRetrievals(this.core, windowSeconds, caller);
  }

  recordHelpful(lessonId: string, caller: Caller): LessonView {
    return recordHelpfulRetrieval(this.core, lessonId, caller);
  }

  async prune(request: PruneRequest, caller: Caller): Promise<LessonView[]> {
    return pruneLessons(this.core, request, caller);
  }

  /** The first page of ListLessons (the console's view). */
  list(request: ListLessonsRequest, caller: Caller): LessonView[] {
    return listLessons(this.core, request, caller).items;
  }

  /** ListLessons, a page at a time (docs/api.md#pagination). */
  listPage(request: ListLessonsRequest, caller: Caller): Page<LessonView> {
    return listLessons(this.core, request, caller);
  }

  get(lessonId: string, caller: Caller): LessonView {
    return viewOf(this.core, visibleLesson(this.core, lessonId, caller));
  }

  async setPinned(lessonId: string, pinned: boolean, caller: Caller): Promise<LessonView> {
    return setLessonPinned(this.core, lessonId, pinned, caller);
  }

  async delete(lessonId: string, caller: Caller): Promise<LessonView> {
    return deleteLesson(this.core, lessonId, caller);
  }

  async restore(lessonId: string, caller: Caller): Promise<{ lesson: LessonView; archived: string[] }> {
    return restoreLesson(this.core, lessonId, caller);
  }

  /** Lessons by owner and state, for the metrics gauge. */
  countsByOwnerAndState(): Array<{ owner: string; state: string; n: number }> {
    return this.core.store.countByState();
  }

  async close(): Promise<void> {
    await this.core.mirror.close();
  }
}
