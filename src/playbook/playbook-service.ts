import { randomBytes, randomUUID } from "node:crypto";
import type { Logger } from "pino";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import type { Embedder } from "../embedding/index.js";
import {
  audienceOf,
  type KeywordIndex,
  MAX_SEARCH_LIMIT,
  PUBLIC_AUDIENCE,
  reciprocalRankFusion,
  SEARCH_QUERY_LIMITS,
  searchedQuery,
  SKILL_PAYLOAD_TYPE,
  type VectorIndex,
  type VectorSearchFilter,
  type VectorSearchHit,
} from "../search/index.js";
import { duplicateKey, isNearDuplicate } from "./duplicates.js";
import { type Clock, type LessonRecord, type LessonState, PLAYBOOK_HEADER, type PlaybookPolicy, systemClock } from "./lesson.js";
import { type AcceptedLesson, acceptLesson, type LessonDraft } from "./lesson-gates.js";
import type { LessonStore } from "./lesson-store.js";
import { readLessonsMirror, type LessonsMirrorWriter } from "./lessons-mirror.js";
import { frequency, hitRate, pruneSelection, trimToCap, utility, type VerificationRun, verificationOutcome } from "./retention.js";

/** A lesson as callers see it: the record and the numbers retention computes from it now. */
export interface LessonView extends LessonRecord {
  readonly utility: number;
  readonly hitRate: number;
  readonly frequency: number;
}

/** Counts the metrics layer wants to hear about; every hook is optional. */
export interface PlaybookEvents {
  retrieved?(count: number): void;
  credited?(count: number): void;
  pruned?(count: number): void;
}

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

/** The candidates the vector search returns before the distance cut and the re-rank. */
const VECTOR_FETCH = 100;
/** The keyword hits consulted by the re-rank. */
const KEYWORD_FETCH = 200;
const META_INDEX = "index-identity";
/** Neighbours checked for a near-exact duplicate, and how alike their vectors must be to be checked at all. */
const NEAR_DUPLICATE_NEIGHBOURS = 5;
const NEAR_DUPLICATE_MIN_SIMILARITY = 0.8;
/** Bumped when what the lesson indexes hold changes meaning, so the next start re-indexes. */
const INDEX_LAYOUT = 1;
const DAY_MS = 86_400_000;
/** Showings past every credit window are forgotten at most this often. */
const FORGET_EVERY_MS = 60_000;

/** No lesson with that id, or one the caller may not see: the same answer on purpose. */
export class LessonNotFoundError extends NotFoundError {
  constructor(readonly lessonId: string) {
    super(`no lesson "${lessonId.slice(0, 80)}" in your playbook`);
  }
}

/**
 * The playbook use cases (docs/playbook.md): the gates, storage, retrieval, credit, pruning,
 * retention and the read surface. LLM work (extracting a lesson, re-running the solver to verify
 * it) happens in the agent; this service judges and keeps what the agent reports.
 */
export class PlaybookService {
  private readonly store: LessonStore;
  private readonly embedder: Embedder;
  private readonly vectors: VectorIndex;
  private readonly keywords: KeywordIndex;
  private readonly mirror: LessonsMirrorWriter;
  private readonly policy: PlaybookPolicy;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly events: PlaybookEvents;
  /** When showings past every credit window were last forgotten. */
  private lastForget = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: PlaybookServiceOptions) {
    this.store = options.store;
    this.embedder = options.embedder;
    this.vectors = options.vectors;
    this.keywords = options.keywords;
    this.mirror = options.mirror;
    this.policy = options.policy;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.events = options.events ?? {};
  }

  /**
   * Start-up: restores lessons that `lessons.json` holds and the table lacks (a lost or rebuilt
   * registry.db), re-indexes when the embedder or the counts changed, and rewrites the mirror.
   */
  async init(): Promise<{ restored: number; reindexed: boolean }> {
    const restored = await this.restoreFromMirror();
    await this.vectors.ensure(this.embedder.dimensions);
    const identity = `${this.embedder.modelId}/${this.embedder.dimensions}/layout-${INDEX_LAYOUT}`;
    const active = this.store.countActive();
    const stale = this.store.meta(META_INDEX) !== identity || (await this.vectors.count()) !== active || this.keywords.count() !== active;
    if (stale) {
      this.logger.info({ lessons: active, embedder: identity }, "re-indexing lessons");
      await this.reindexAll();
      this.store.setMeta(META_INDEX, identity);
    }
    await this.mirror.flush();
    return { restored, reindexed: stale };
  }

  /** Re-embeds and re-indexes every active lesson; inactive ones leave both indexes. */
  async reindexAll(): Promise<void> {
    await this.vectors.ensure(this.embedder.dimensions);
    this.keywords.clear();
    const inactive = this.store.list(undefined, ["archived", "deleted"]).map((l) => l.id);
    for (let i = 0; i < inactive.length; i += 256) await this.vectors.remove(inactive.slice(i, i + 256));
    const active = this.store.list(undefined, ["active"]);
    for (let i = 0; i < active.length; i += 64) await this.index(active.slice(i, i + 64));
  }

  /** AddLesson: the gates, then a merge into a duplicate or a new lesson, then the cap. */
  async add(draft: LessonDraft, caller: Caller): Promise<{ lesson: LessonView; merged: boolean; archived: string[] }> {
    const accepted = acceptLesson(draft, this.policy);
    const owner = caller.agentId;
    // Embed before any write, so a failing embedder stores nothing; the vector also finds near-duplicates.
    const [vector] = await this.embedder.embed([accepted.trigger]);
    const neighbours = vector ? await this.nearDuplicateCandidates(owner, vector) : [];
    const now = this.clock();
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
    const outcome = this.store.transaction("add a lesson", () => {
      const duplicate = this.findDuplicate(owner, accepted, neighbours);
      if (duplicate) return { merged: this.merge(duplicate, accepted), archived: [] as LessonRecord[] };
      this.store.insert(lesson);
      return { merged: undefined, archived: this.applyCap(owner, now) };
    });
    if (outcome.merged) {
      // The domains may have grown: the keyword text follows (the trigger's vector is unchanged, and cached).
      await this.index([this.mustGet(outcome.merged.id)]);
      this.mirror.schedule();
      return { lesson: outcome.merged, merged: true, archived: [] };
    }
    const archivedIds = outcome.archived.map((l) => l.id);
    if (!archivedIds.includes(lesson.id)) await this.index([lesson], vector ? [vector] : undefined);
    await this.unindex(archivedIds.filter((id) => id !== lesson.id));
    this.mirror.schedule();
    this.logger.info({ lesson: lesson.id, agent: owner, source: lesson.source, archived: archivedIds }, "lesson added");
    return { lesson: this.viewOf(this.mustGet(lesson.id)), merged: false, archived: archivedIds };
  }

  /** VerifyLesson: verified only when the outcome strictly improves; a verified lesson stays verified. */
  async verify(lessonId: string, run: VerificationRun, caller: Caller): Promise<{ lesson: LessonView; reason: string }> {
    for (const [field, attempts, passed] of [
      ["original_attempts", run.originalAttempts, run.originalPassed],
      ["verify_attempts", run.verifyAttempts, run.verifyPassed],
    ] as const) {
      if (!Number.isInteger(attempts) || attempts > PLAYBOOK_LIMITS.maxAttempts) {
        throw new InvalidArgumentError(field, `must be an integer in [0, ${PLAYBOOK_LIMITS.maxAttempts}], got ${attempts}`);
      }
      if (passed && attempts < 1) throw new InvalidArgumentError(field, "must be at least 1 for a run that passed");
    }
    const lesson = this.changeable(lessonId, caller);
    if (lesson.state === "deleted") throw new FailedPreconditionError(`lesson "${lessonId}" is deleted; restore it first`);
    const outcome = verificationOutcome(run);
    const verified = lesson.verified || outcome.verified;
    const reason = !outcome.verified && lesson.verified ? `${outcome.reason}; it stays verified from an earlier run` : outcome.reason;
    this.store.update({ ...lesson, verified, updatedAt: this.clock() });
    this.mirror.schedule();
    this.logger.info({ lesson: lessonId, verified, reason }, "lesson verification recorded");
    return { lesson: this.viewOf(this.mustGet(lessonId)), reason };
  }

  /**
   * GetPlaybookContext: vector search among the caller's own and the public active lessons,
   * keeping those at cosine distance below `maxDistance`, re-ranked with BM25 (rank fusion), top
   * `limit`. Every lesson returned counts a retrieval.
   */
  async context(query: string, requestedLimit: number, caller: Caller): Promise<PlaybookContext> {
    const trimmed = query.trim();
    if (trimmed === "") throw new InvalidArgumentError("query", "is empty: pass the task or user message the lessons are for");
    const { text, pieces, warning } = searchedQuery(trimmed);
    const warnings = warning === undefined ? [] : [warning];
    const limit = requestedLimit === 0 ? this.policy.contextLimit : requestedLimit;
    if (!Number.isInteger(limit) || limit < 1 || limit > PLAYBOOK_LIMITS.maxContextLimit) {
      throw new InvalidArgumentError("limit", `must be in [1, ${PLAYBOOK_LIMITS.maxContextLimit}] (0 means ${this.policy.contextLimit})`);
    }
    const filter = playbookFilter(caller.agentId);
    // A long query's pieces (its beginning and end) are searched apart; a lesson keeps its closest
    // piece (docs/routing.md#long-queries).
    const vectors = await this.embedder.embed(pieces);
    if (vectors.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    const searchLimit = Math.min(MAX_SEARCH_LIMIT, Math.max(VECTOR_FETCH, limit * 4));
    const hits = closestPerId(await Promise.all(vectors.map((vector) => this.vectors.search(vector, { limit: searchLimit, filter }))));
    const near = hits.filter((hit) => 1 - hit.score < this.policy.maxDistance);
    if (near.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    // Defence in depth: the registry's view of each candidate decides, not the index payload.
    const byId = new Map(
      this.store
        .getMany(near.map((h) => h.id))
        .filter((l) => l.state === "active" && (l.owner === caller.agentId || l.visibility === "public"))
        .map((l) => [l.id, l]),
    );
    const candidates = near.filter((h) => byId.has(h.id));
    const keywordRanks = this.keywords.search(text, { limit: KEYWORD_FETCH, filter }).filter((hit) => byId.has(hit.id));
    const chosen = reciprocalRankFusion(
      [
        { source: "vector", items: candidates },
        { source: "keyword", items: keywordRanks },
      ],
      { limit },
    ).filter((item) => item.ranks.vector !== undefined);
    if (chosen.length === 0) return { context: "", lessons: [], retrievalId: "", warnings };
    const retrievalId = randomUUID();
    const now = this.clock();
    const ids = chosen.map((c) => c.id);
    this.store.recordRetrievals(retrievalId, caller.agentId, ids, now);
    if (now - this.lastForget >= FORGET_EVERY_MS) {
      this.lastForget = now;
      this.store.forgetRetrievalsBefore(now - PLAYBOOK_LIMITS.maxCreditWindowSeconds * 1000);
    }
    this.mirror.schedule();
    this.events.retrieved?.(ids.length);
    const lessons = ids.map((id) => this.viewOf(this.mustGet(id), now));
    for (const [i, lesson] of lessons.entries()) {
      this.logger.debug(
        {
          retrievalId,
          agent: caller.agentId,
          lesson: lesson.id,
          source: lesson.source,
          sourceChallengeHash: lesson.sourceChallengeHash,
          distance: 1 - (chosen[i]?.scores.vector ?? 0),
        },
        "lesson retrieved",
      );
    }
    return { context: formatContext(lessons), lessons, retrievalId, warnings };
  }

  /**
   * CreditRecentRetrievals: the caller's turn succeeded; every lesson it was shown within the
   * window gets one helpful retrieval per showing, each showing credited at most once.
   */
  creditRecent(windowSeconds: number, caller: Caller): string[] {
    const window = windowSeconds === 0 ? this.policy.creditWindowSeconds : windowSeconds;
    if (!Number.isInteger(window) || window < 1 || window > PLAYBOOK_LIMITS.maxCreditWindowSeconds) {
      throw new InvalidArgumentError(
        "window_seconds",
        `must be in [1, ${PLAYBOOK_LIMITS.maxCreditWindowSeconds}] (0 means ${this.policy.creditWindowSeconds})`,
      );
    }
    const now = this.clock();
    const credited = this.store.creditSince(caller.agentId, now - window * 1000, now);
    if (credited.size > 0) {
      this.mirror.schedule();
      this.events.credited?.([...credited.values()].reduce((a, b) => a + b, 0));
    }
    return [...credited.keys()].sort();
  }

  /** RecordHelpfulRetrieval: credits the caller's latest uncredited showing of one lesson. */
  recordHelpful(lessonId: string, caller: Caller): LessonView {
    const lesson = this.visible(lessonId, caller);
    if (!this.store.creditLatest(caller.agentId, lesson.id, this.clock())) {
      throw new FailedPreconditionError(
        `lesson "${lessonId}" has no uncredited retrieval by ${caller.agentId}: it counts as helpful only after GetPlaybookContext showed it`,
      );
    }
    this.mirror.schedule();
    this.events.credited?.(1);
    return this.viewOf(this.mustGet(lessonId));
  }

  /**
   * PruneLessons: archives non-verified, unpinned lessons surfaced at least `minRetrievals` times
   * and never helpful, at most `maxDropFraction` of each playbook per call (an admin's call
   * prunes every agent's playbook, each on its own budget).
   */
  async prune(
    request: { minRetrievals: number; maxDropFraction: number | undefined; dryRun: boolean },
    caller: Caller,
  ): Promise<LessonView[]> {
    const minRetrievals = request.minRetrievals === 0 ? this.policy.pruneMinRetrievals : request.minRetrievals;
    const maxDropFraction = request.maxDropFraction ?? this.policy.pruneMaxDropFraction;
    if (!(maxDropFraction > 0 && maxDropFraction <= 1)) {
      throw new InvalidArgumentError("max_drop_fraction", `must be in (0, 1], got ${maxDropFraction}`);
    }
    const now = this.clock();
    const owners = caller.admin ? this.store.owners() : [caller.agentId];
    const dropped: LessonRecord[] = [];
    for (const owner of owners) {
      dropped.push(...pruneSelection(this.store.list(owner, ["active"]), { minRetrievals, maxDropFraction }, now, this.policy));
    }
    if (!request.dryRun && dropped.length > 0) {
      this.store.transaction("prune lessons", () => {
        for (const lesson of dropped) this.store.setState(lesson.id, "archived", "pruned", now);
      });
      await this.unindex(dropped.map((l) => l.id));
      this.mirror.schedule();
      this.events.pruned?.(dropped.length);
      this.logger.info({ dropped: dropped.map((l) => l.id), agent: caller.agentId }, "pruned lessons");
    }
    return dropped.map((l) => this.viewOf(request.dryRun ? l : this.mustGet(l.id), now));
  }

  /** ListLessons: the caller's lessons (an admin's: everyone's, or one owner's), highest utility first. */
  list(
    request: { scope: LessonScope; domain: string; limit: number; includeInactive: boolean; owner: string },
    caller: Caller,
  ): LessonView[] {
    const limit = request.limit === 0 ? PLAYBOOK_LIMITS.defaultListLimit : request.limit;
    if (!Number.isInteger(limit) || limit < 1 || limit > PLAYBOOK_LIMITS.maxListLimit) {
      throw new InvalidArgumentError(
        "limit",
        `must be in [1, ${PLAYBOOK_LIMITS.maxListLimit}] (0 means ${PLAYBOOK_LIMITS.defaultListLimit})`,
      );
    }
    if (request.owner !== "" && request.owner !== caller.agentId && !caller.admin) {
      throw new PermissionDeniedError(caller.agentId, "only an admin may list another agent's lessons");
    }
    const owner = request.owner !== "" ? request.owner : caller.admin ? undefined : caller.agentId;
    const states: LessonState[] = request.includeInactive ? ["active", "archived", "deleted"] : ["active"];
    const now = this.clock();
    const since = scopeStart(request.scope, now);
    const domain = request.domain.trim().toLowerCase();
    return this.store
      .list(owner, states)
      .filter((l) => l.createdAt >= since && (domain === "" || l.domains.includes(domain)))
      .map((l) => this.viewOf(l, now))
      .sort((a, b) => b.utility - a.utility || b.createdAt - a.createdAt || a.id.localeCompare(b.id))
      .slice(0, limit);
  }

  get(lessonId: string, caller: Caller): LessonView {
    return this.viewOf(this.visible(lessonId, caller));
  }

  /** SetLessonPinned: the head pin, kept first by the cap and never pruned. */
  async setPinned(lessonId: string, pinned: boolean, caller: Caller): Promise<LessonView> {
    const lesson = this.changeable(lessonId, caller);
    if (lesson.pinned !== pinned) {
      this.store.update({ ...lesson, pinned, updatedAt: this.clock() });
      this.mirror.schedule();
    }
    return this.viewOf(this.mustGet(lessonId));
  }

  /** DeleteLesson: soft; the lesson leaves retrieval and can be restored. */
  async delete(lessonId: string, caller: Caller): Promise<LessonView> {
    const lesson = this.changeable(lessonId, caller);
    if (lesson.state === "deleted") throw new FailedPreconditionError(`lesson "${lessonId}" is already deleted`);
    this.store.setState(lessonId, "deleted", "", this.clock());
    await this.unindex([lessonId]);
    this.mirror.schedule();
    return this.viewOf(this.mustGet(lessonId));
  }

  /** RestoreLesson: an archived or deleted lesson comes back into the playbook (the cap then applies). */
  async restore(lessonId: string, caller: Caller): Promise<{ lesson: LessonView; archived: string[] }> {
    const lesson = this.changeable(lessonId, caller);
    if (lesson.state === "active") throw new FailedPreconditionError(`lesson "${lessonId}" is already in the playbook`);
    const [vector] = await this.embedder.embed([lesson.trigger]);
    const now = this.clock();
    const archived = this.store.transaction("restore a lesson", () => {
      this.store.setState(lessonId, "active", "", now);
      return this.applyCap(lesson.owner, now).map((l) => l.id);
    });
    if (!archived.includes(lessonId)) await this.index([this.mustGet(lessonId)], vector ? [vector] : undefined);
    await this.unindex(archived.filter((id) => id !== lessonId));
    this.mirror.schedule();
    return { lesson: this.viewOf(this.mustGet(lessonId)), archived };
  }

  /** Lessons by owner and state, for the metrics gauge. */
  countsByOwnerAndState(): Array<{ owner: string; state: string; n: number }> {
    return this.store.countByState();
  }

  async close(): Promise<void> {
    await this.mirror.close();
  }

  /**
   * Ids of the owner's active lessons whose trigger is nearly the same vector: the only ones that
   * can be near-exact duplicates (equal words give equal vectors), so a large playbook is never scanned.
   */
  private async nearDuplicateCandidates(owner: string, vector: Float32Array): Promise<string[]> {
    const hits = await this.vectors.search(vector, {
      limit: NEAR_DUPLICATE_NEIGHBOURS,
      filter: { statuses: ["active"], owners: [owner] },
    });
    return hits.filter((hit) => hit.score >= NEAR_DUPLICATE_MIN_SIMILARITY).map((hit) => hit.id);
  }

  /** The owner's active lesson that `accepted` duplicates: the same duplicate key, or a near-exact neighbour. */
  private findDuplicate(owner: string, accepted: AcceptedLesson, neighbours: readonly string[]): LessonRecord | undefined {
    const exact = this.store.activeByDuplicateKey(owner, duplicateKey(accepted.trigger, accepted.correctPattern));
    if (exact) return exact;
    return this.store.getMany(neighbours).find((l) => l.owner === owner && l.state === "active" && isNearDuplicate(l, accepted));
  }

  /** Merges a duplicate into the lesson it repeats: frequency + 1, the higher confidence, the union of domains. */
  private merge(duplicate: LessonRecord, accepted: AcceptedLesson): LessonView {
    const merged: LessonRecord = {
      ...duplicate,
      timesAdded: duplicate.timesAdded + 1,
      confidence: Math.max(duplicate.confidence, accepted.confidence),
      domains: [...new Set([...duplicate.domains, ...accepted.domains])].sort(),
      updatedAt: this.clock(),
    };
    this.store.update(merged);
    this.logger.info({ lesson: duplicate.id, agent: duplicate.owner, timesAdded: merged.timesAdded }, "duplicate lesson merged");
    return this.viewOf(merged);
  }

  /** Archives what the cap does not keep of `owner`'s active lessons (call inside a transaction). */
  private applyCap(owner: string, now: number): LessonRecord[] {
    // The common case (under the cap) costs one indexed count, not a read of the whole playbook.
    if (this.store.countActiveOf(owner) <= this.policy.maxLessons) return [];
    const { archive } = trimToCap(this.store.list(owner, ["active"]), now, this.policy);
    for (const lesson of archive) this.store.setState(lesson.id, "archived", "cap", now);
    if (archive.length > 0) this.logger.info({ agent: owner, archived: archive.map((l) => l.id) }, "playbook over its cap: archived");
    return archive;
  }

  private async index(lessons: readonly LessonRecord[], vectors?: readonly Float32Array[]): Promise<void> {
    if (lessons.length === 0) return;
    const embedded = vectors ?? (await this.embedder.embed(lessons.map((l) => l.trigger)));
    await this.vectors.upsert(
      lessons.map((lesson, i) => ({
        id: lesson.id,
        vector: embedded[i] as Float32Array,
        payload: { type: SKILL_PAYLOAD_TYPE, name: lesson.id, owner: lesson.owner, visibility: lesson.visibility, status: "active" },
      })),
    );
    this.keywords.upsert(
      lessons.map((lesson) => ({
        name: lesson.id,
        description: keywordText(lesson),
        owner: lesson.owner,
        visibility: lesson.visibility,
        status: "active",
      })),
    );
  }

  private async unindex(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.vectors.remove(ids);
    this.keywords.remove(ids);
  }

  private async restoreFromMirror(): Promise<number> {
    let reading;
    try {
      reading = await readLessonsMirror(this.options.mirrorDirectory);
    } catch (error) {
      this.logger.error({ err: error }, "lessons.json is unreadable; lessons not in registry.db cannot be restored from it");
      return 0;
    }
    if (!reading) return 0;
    for (const problem of reading.skipped) this.logger.warn({ problem }, "lessons.json: skipped an unreadable entry");
    const missing = reading.lessons.filter((l) => this.store.get(l.id) === undefined);
    if (missing.length === 0) return 0;
    this.store.transaction("restore lessons from lessons.json", () => {
      for (const lesson of missing) this.store.insert(lesson);
    });
    this.logger.warn({ restored: missing.length }, "restored lessons from lessons.json that registry.db did not hold");
    return missing.length;
  }

  private mustGet(id: string): LessonRecord {
    const lesson = this.store.get(id);
    if (!lesson) throw new LessonNotFoundError(id);
    return lesson;
  }

  /** The lesson when the caller may read it: its own, any public one, or any at all for an admin. */
  private visible(id: string, caller: Caller): LessonRecord {
    const lesson = this.store.get(id);
    if (!lesson || !(caller.admin || lesson.owner === caller.agentId || lesson.visibility === "public")) throw new LessonNotFoundError(id);
    return lesson;
  }

  /** The lesson when the caller may change it: its owner or an admin. A public lesson of another agent is read-only. */
  private changeable(id: string, caller: Caller): LessonRecord {
    const lesson = this.visible(id, caller);
    if (!caller.admin && lesson.owner !== caller.agentId) {
      throw new PermissionDeniedError(caller.agentId, `lesson "${id}" belongs to ${lesson.owner}; other agents may read it, not change it`);
    }
    return lesson;
  }

  private viewOf(lesson: LessonRecord, now = this.clock()): LessonView {
    return { ...lesson, utility: utility(lesson, now, this.policy), hitRate: hitRate(lesson), frequency: frequency(lesson) };
  }
}

/** The caller's own private lessons and every public one, active only. */
function playbookFilter(agentId: string): VectorSearchFilter {
  return { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, audienceOf(agentId, "private")] };
}

/** Hits of several searches as one list, best first: each id with its best score (its closest query). */
function closestPerId(lists: ReadonlyArray<readonly VectorSearchHit[]>): VectorSearchHit[] {
  const best = new Map<string, VectorSearchHit>();
  for (const hit of lists.flat()) {
    const kept = best.get(hit.id);
    if (kept === undefined || hit.score > kept.score) best.set(hit.id, hit);
  }
  return [...best.values()].sort((a, b) => b.score - a.score);
}

/** What BM25 ranks a lesson by: every text it holds. */
function keywordText(lesson: LessonRecord): string {
  return [lesson.trigger, lesson.antiPattern, lesson.correctPattern, lesson.domains.join(" ")].filter((t) => t !== "").join("\n");
}

/** The block injected into prompts: the header, then one entry per lesson. */
export function formatContext(lessons: readonly LessonRecord[]): string {
  if (lessons.length === 0) return "";
  const entries = lessons.map((lesson) => {
    const lines = [`- When: ${oneLine(lesson.trigger)}`];
    if (lesson.antiPattern !== "") lines.push(`  Avoid: ${oneLine(lesson.antiPattern)}`);
    lines.push(`  Do: ${oneLine(lesson.correctPattern)}`);
    return lines.join("\n");
  });
  return `${PLAYBOOK_HEADER}\n${entries.join("\n")}\n`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}

/** The first instant a scope covers: 00:00 UTC today, 7 days back, or the beginning. */
function scopeStart(scope: LessonScope, now: number): number {
  if (scope === "today") return Math.floor(now / DAY_MS) * DAY_MS;
  if (scope === "week") return now - 7 * DAY_MS;
  return Number.NEGATIVE_INFINITY;
}

function newLessonId(): string {
  return `lsn_${randomBytes(8).toString("hex")}`;
}
