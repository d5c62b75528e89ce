import { randomBytes } from "node:crypto";
import type { Caller } from "../identity/index.js";
import { duplicateKey, isNearDuplicate } from "./duplicates.js";
import type { LessonRecord } from "./lesson.js";
import { type AcceptedLesson, acceptLesson, type LessonDraft } from "./lesson-gates.js";
import { applyCap, indexLessons, mustGet, type PlaybookCore, unindexLessons, viewOf } from "./playbook-core.js";
import type { LessonView } from "./playbook-types.js";

/** Neighbours checked for a near-exact duplicate, and how alike their vectors must be to be checked at all. */
const NEAR_DUPLICATE_NEIGHBOURS = 5;
const NEAR_DUPLICATE_MIN_SIMILARITY = 0.8;

/** AddLesson: the gates, then a merge into a duplicate or a new lesson, then the cap. */
export async function addLesson(
  core: PlaybookCore,
  draft: LessonDraft,
  caller: Caller,
): Promise<{ lesson: LessonView; merged: boolean; archived: string[] }> {
  const accepted = acceptLesson(draft, core.policy);
  const owner = caller.agentId;
  // Embed before any write, so a failing embedder stores nothing; the vector also finds near-duplicates.
  const [vector] = await core.embedder.embed([accepted.trigger]);
  const neighbours = vector ? await nearDuplicateCandidates(core, owner, vector) : [];
  const now = core.clock();
  const lesson: LessonRecord = {
    id: newLessonId(),
    owner,
    ...accepted,
    state: "active",
    archivedReason: "",
    verified: false,
    pinned: false,
    retrievals: 0,
    helpfulRetrievals: 0,
    timesAdded: 1,
    createdAt: now,
    updatedAt: now,
    lastRetrievedAt: undefined,
    lastHelpfulAt: undefined,
  };
  // One transaction: a duplicate added while the embedder worked is found here, not stored twice.
  const outcome = core.store.transaction("add a lesson", () => {
    const duplicate = findDuplicate(core, owner, accepted, neighbours);
    if (duplicate) return { merged: merge(core, duplicate, accepted), archived: [] as LessonRecord[] };
    core.store.insert(lesson);
    return { merged: undefined, archived: applyCap(core, owner, now) };
  });
  if (outcome.merged) {
    // The domains may have grown: the keyword text follows (the trigger's vector is unchanged, and cached).
    await indexLessons(core, [mustGet(core, outcome.merged.id)]);
    core.mirror.schedule();
    return { lesson: outcome.merged, merged: true, archived: [] };
  }
  const archivedIds = outcome.archived.map((l) => l.id);
  if (!archivedIds.includes(lesson.id)) await indexLessons(core, [lesson], vector ? [vector] : undefined);
  await unindexLessons(
    core,
    archivedIds.filter((id) => id !== lesson.id),
  );
  core.mirror.schedule();
  core.logger.info({ lesson: lesson.id, agent: owner, source: lesson.source, archived: archivedIds }, "lesson added");
  return { lesson: viewOf(core, mustGet(core, lesson.id)), merged: false, archived: archivedIds };
}

/**
 * Ids of the owner's active lessons whose trigger is nearly the same vector: the only ones that
 * can be near-exact duplicates (equal words give equal vectors), so a large playbook is never scanned.
 */
async function nearDuplicateCandidates(core: PlaybookCore, owner: string, vector: Float32Array): Promise<string[]> {
  const hits = await core.vectors.search(vector, {
    limit: NEAR_DUPLICATE_NEIGHBOURS,
    filter: { statuses: ["active"], owners: [owner] },
  });
  return hits.filter((hit) => hit.score >= NEAR_DUPLICATE_MIN_SIMILARITY).map((hit) => hit.id);
}

/** The owner's active lesson that `accepted` duplicates: the same duplicate key, or a near-exact neighbour. */
function findDuplicate(
  core: PlaybookCore,
  owner: string,
  accepted: AcceptedLesson,
  neighbours: readonly string[],
): LessonRecord | undefined {
  const exact = core.store.activeByDuplicateKey(owner, duplicateKey(accepted.trigger, accepted.correctPattern));
  if (exact) return exact;
  return core.store.getMany(neighbours).find((l) => l.owner === owner && l.state === "active" && isNearDuplicate(l, accepted));
}

/** Merges a duplicate into the lesson it repeats: frequency + 1, the higher confidence, the union of domains. */
function merge(core: PlaybookCore, duplicate: LessonRecord, accepted: AcceptedLesson): LessonView {
  const merged: LessonRecord = {
    ...duplicate,
    timesAdded: duplicate.timesAdded + 1,
    confidence: Math.max(duplicate.confidence, accepted.confidence),
    domains: [...new Set([...duplicate.domains, ...accepted.domains])].sort(),
    updatedAt: core.clock(),
  };
  core.store.update(merged);
  core.logger.info({ lesson: duplicate.id, agent: duplicate.owner, timesAdded: merged.timesAdded }, "duplicate lesson merged");
  return viewOf(core, merged);
}

function newLessonId(): string {
  return `lsn_${randomBytes(8).toString("hex")}`;
}
