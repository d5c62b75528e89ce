import type { Logger } from "pino";
import { PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import type { Embedder } from "../embedding/index.js";
import { type KeywordIndex, SKILL_PAYLOAD_TYPE, type VectorIndex } from "../search/index.js";
import { type Clock, type LessonRecord, type PlaybookPolicy, systemClock } from "./lesson.js";
import type { LessonStore } from "./lesson-store.js";
import { isGuarded } from "./lesson-gates.js";
import type { LessonsMirrorWriter } from "./lessons-mirror.js";
import { frequency, hitRate, trimToCap, utility } from "./retention.js";
import { LessonNotFoundError, type LessonView, type PlaybookEvents } from "./playbook-types.js";

export interface PlaybookServiceOptions {
  readonly store: LessonStore;
  /** The routing embedder (same model, same cache): lessons and skills share one machinery. */
  readonly embedder: Embedder;
  /** The lessons' own vector index (a table or collection of their own). */
  readonly vectors: VectorIndex;
  /** The lessons' own keyword index, for the BM25 re-rank. */
  readonly keywords: KeywordIndex;
  readonly mirror: LessonsMirrorWriter;
  /** The canonical directory holding `lessons.json`, read at start-up to restore lost lessons. */
  readonly mirrorDirectory: string;
  readonly policy: PlaybookPolicy;
  readonly logger: Logger;
  /** @default Date.now */
  readonly clock?: Clock;
  readonly events?: PlaybookEvents;
}

/**
 * What every playbook use case (one per file) works through: the options with their defaults
 * applied. The functions below are the lookups and index writes the use cases share.
 */
export type PlaybookCore = Readonly<Required<PlaybookServiceOptions>>;

export function playbookCore(options: PlaybookServiceOptions): PlaybookCore {
  return { ...options, clock: options.clock ?? systemClock, events: options.events ?? {} };
}

/** Puts active lessons into both indexes; `vectors` spares embedding the triggers again. */
export async function indexLessons(core: PlaybookCore, lessons: readonly LessonRecord[], vectors?: readonly Float32Array[]): Promise<void> {
  if (lessons.length === 0) return;
  const embedded = vectors ?? (await core.embedder.embed(lessons.map((l) => l.trigger)));
  await core.vectors.upsert(
    lessons.map((lesson, i) => ({
      id: lesson.id,
      vector: embedded[i] as Float32Array,
      payload: { type: SKILL_PAYLOAD_TYPE, name: lesson.id, owner: lesson.owner, visibility: lesson.visibility, status: "active" },
    })),
  );
  core.keywords.upsert(
    lessons.map((lesson) => ({
      name: lesson.id,
      description: keywordText(lesson),
      owner: lesson.owner,
      visibility: lesson.visibility,
      status: "active",
    })),
  );
}

export async function unindexLessons(core: PlaybookCore, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await core.vectors.remove(ids);
  core.keywords.remove(ids);
}

/** Archives what the cap does not keep of `owner`'s active lessons (call inside a transaction). */
export function applyCap(core: PlaybookCore, owner: string, now: number): LessonRecord[] {
  // The common case (under the cap) costs one indexed count, not a read of the whole playbook.
  if (core.store.countActiveOf(owner) <= core.policy.maxLessons) return [];
  const { archive } = trimToCap(core.store.list(owner, ["active"]), now, core.policy);
  for (const lesson of archive) core.store.setState(lesson.id, "archived", "cap", now);
  if (archive.length > 0) core.logger.info({ agent: owner, archived: archive.map((l) => l.id) }, "playbook over its cap: archived");
  return archive;
}

export function mustGet(core: PlaybookCore, id: string): LessonRecord {
  const lesson = core.store.get(id);
  if (!lesson) throw new LessonNotFoundError(id);
  return lesson;
}

/** The lesson when the caller may read it: its own, any public one, or any at all for an admin. */
export function visibleLesson(core: PlaybookCore, id: string, caller: Caller): LessonRecord {
  const lesson = core.store.get(id);
  if (!lesson || !(caller.admin || lesson.owner === caller.agentId || lesson.visibility === "public")) throw new LessonNotFoundError(id);
  return lesson;
}

/** The lesson when the caller may change it: its owner or an admin. A public lesson of another agent is read-only. */
export function changeableLesson(core: PlaybookCore, id: string, caller: Caller): LessonRecord {
  const lesson = visibleLesson(core, id, caller);
  if (!caller.admin && lesson.owner !== caller.agentId) {
    throw new PermissionDeniedError(caller.agentId, `lesson "${id}" belongs to ${lesson.owner}; other agents may read it, not change it`);
  }
  return lesson;
}

export function viewOf(core: PlaybookCore, lesson: LessonRecord, now = core.clock()): LessonView {
  return {
    ...lesson,
    utility: utility(lesson, now, core.policy),
    hitRate: hitRate(lesson),
    frequency: frequency(lesson),
    guarded: isGuarded(lesson),
  };
}

/** What BM25 ranks a lesson by: every text it holds. */
function keywordText(lesson: LessonRecord): string {
  return [lesson.trigger, lesson.antiPattern, lesson.correctPattern, lesson.domains.join(" ")].filter((t) => t !== "").join("\n");
}
