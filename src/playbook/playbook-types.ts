import { NotFoundError } from "../errors/index.js";
import { SEARCH_QUERY_LIMITS } from "../search/index.js";
import type { LessonRecord } from "./lesson.js";

/** A lesson as callers see it: the record and the numbers retention computes from it now. */
export interface LessonView extends LessonRecord {
  readonly utility: number;
  readonly hitRate: number;
  readonly frequency: number;
  /** The generalization guard had a challenge text to compare it with (docs/playbook.md#gates). */
  readonly guarded: boolean;
}

/** Counts the metrics layer wants to hear about; every hook is optional. */
export interface PlaybookEvents {
  retrieved?(count: number): void;
  credited?(count: number): void;
  pruned?(count: number): void;
}

export type LessonScope = "today" | "week" | "all";

/** What GetPlaybookContext answers. */
export interface PlaybookContext {
  /** The block to inject, starting with {@link PLAYBOOK_HEADER}; empty when no lesson qualifies. */
  readonly context: string;
  readonly lessons: LessonView[];
  /** Names this retrieval in logs; empty when nothing was shown. */
  readonly retrievalId: string;
  /** Says when only part of a long query was searched (docs/routing.md#long-queries). */
  readonly warnings: string[];
}

/** Limits of the read surface. */
export const PLAYBOOK_LIMITS = {
  /** The longest query accepted; only its first and last 1,000 are searched (docs/routing.md#long-queries). */
  queryChars: SEARCH_QUERY_LIMITS.acceptedChars,
  maxContextLimit: 50,
  defaultListLimit: 50,
  maxListLimit: 1_000,
  /** Credit windows are at most a day; older retrievals are forgotten. */
  maxCreditWindowSeconds: 86_400,
  maxAttempts: 1_000,
} as const;

/** No lesson with that id, or one the caller may not see: the same answer on purpose. */
export class LessonNotFoundError extends NotFoundError {
  constructor(readonly lessonId: string) {
    super(`no lesson "${lessonId.slice(0, 80)}" in your playbook`);
  }
}
