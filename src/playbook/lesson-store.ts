import type Database from "better-sqlite3";
import { withSqlite } from "../sqlite/index.js";
import { duplicateKey } from "./duplicates.js";
import type { ArchiveReason, LessonRecord, LessonState, LessonVisibility } from "./lesson.js";

/** A row of `lessons` as SQLite returns it. */
interface LessonRow {
  id: string;
  owner: string;
  trigger: string;
  anti_pattern: string;
  correct_pattern: string;
  domains: string;
  confidence: number;
  source: string;
  source_challenge_hash: string;
  challenge_text_hash: string;
  state: string;
  archived_reason: string;
  visibility: string;
  verified: number;
  pinned: number;
  retrievals: number;
  helpful_retrievals: number;
  times_added: number;
  created_at: number;
  updated_at: number;
  last_retrieved_at: number | null;
  last_helpful_at: number | null;
}

/** One lesson shown by one GetPlaybookContext call, until it is credited or ages out. */
export interface RetrievalRow {
  readonly lessonId: string;
  readonly at: number;
}

/**
 * The playbook's tables in registry.db: `lessons` (the source of truth), `lesson_retrievals` (what
 * each agent was shown and when, for credit) and `playbook_meta`. Synchronous, like better-sqlite3.
 */
export class LessonStore {
  constructor(private readonly db: Database.Database) {}

  /** Runs `work` in one transaction (all or nothing). */
  transaction<T>(action: string, work: () => T): T {
    return withSqlite("playbook", action, () => this.db.transaction(work)());
  }

  get(id: string): LessonRecord | undefined {
    const row = withSqlite("playbook", "read a lesson", () => this.db.prepare("SELECT * FROM lessons WHERE id = ?").get(id)) as
      LessonRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Several lessons by id, in no particular order; unknown ids are left out. */
  getMany(ids: readonly string[]): LessonRecord[] {
    if (ids.length === 0) return [];
    const rows = withSqlite("playbook", "read lessons", () =>
      this.db.prepare(`SELECT * FROM lessons WHERE id IN (${ids.map(() => "?").join(", ")})`).all(...ids),
    ) as LessonRow[];
    return rows.map(fromRow);
  }

  /** Lessons of one owner (every owner when undefined) in the given states. */
  list(owner: string | undefined, states: readonly LessonState[]): LessonRecord[] {
    if (states.length === 0) return [];
    const marks = states.map(() => "?").join(", ");
    const rows = withSqlite("playbook", "list lessons", () =>
      owner === undefined
        ? this.db.prepare(`SELECT * FROM lessons WHERE state IN (${marks})`).all(...states)
        : this.db.prepare(`SELECT * FROM lessons WHERE owner = ? AND state IN (${marks})`).all(owner, ...states),
    ) as LessonRow[];
    return rows.map(fromRow);
  }

  /** The active lesson of `owner` with this {@link duplicateKey}, if any. */
  activeByDuplicateKey(owner: string, key: string): LessonRecord | undefined {
    const row = withSqlite("playbook", "look up a duplicate lesson", () =>
      this.db.prepare("SELECT * FROM lessons WHERE owner = ? AND duplicate_key = ? AND state = 'active' LIMIT 1").get(owner, key),
    ) as LessonRow | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Every owner with at least one active lesson. */
  owners(): string[] {
    return withSqlite("playbook", "list playbook owners", () =>
      (this.db.prepare("SELECT DISTINCT owner FROM lessons WHERE state = 'active' ORDER BY owner").all() as Array<{ owner: string }>).map(
        (r) => r.owner,
      ),
    );
  }

  countByState(): Array<{ owner: string; state: string; n: number }> {
    return withSqlite(
      "playbook",
      "count lessons",
      () =>
        this.db.prepare("SELECT owner, state, count(*) AS n FROM lessons GROUP BY owner, state").all() as Array<{
          owner: string;
          state: string;
          n: number;
        }>,
    );
  }

  /** Active lessons of one owner. */
  countActiveOf(owner: string): number {
    return withSqlite(
      "playbook",
      "count lessons",
      () => (this.db.prepare("SELECT count(*) AS n FROM lessons WHERE owner = ? AND state = 'active'").get(owner) as { n: number }).n,
    );
  }

  countActive(): number {
    return withSqlite(
      "playbook",
      "count lessons",
      () => (this.db.prepare("SELECT count(*) AS n FROM lessons WHERE state = 'active'").get() as { n: number }).n,
    );
  }

  /** Inserts a lesson; the id must be new. */
  insert(lesson: LessonRecord): void {
    withSqlite("playbook", "store a lesson", () =>
      this.db
        .prepare(
          `INSERT INTO lessons (id, owner, trigger, anti_pattern, correct_pattern, domains, confidence, source, source_challenge_hash,
             challenge_text_hash, state, archived_reason, visibility, verified, pinned, retrievals, helpful_retrievals, times_added,
             created_at, updated_at, last_retrieved_at, last_helpful_at, duplicate_key)
           VALUES (@id, @owner, @trigger, @anti_pattern, @correct_pattern, @domains, @confidence, @source, @source_challenge_hash,
             @challenge_text_hash, @state, @archived_reason, @visibility, @verified, @pinned, @retrievals, @helpful_retrievals, @times_added,
             @created_at, @updated_at, @last_retrieved_at, @last_helpful_at, @duplicate_key)`,
        )
        .run({ ...toRow(lesson), duplicate_key: duplicateKey(lesson.trigger, lesson.correctPattern) }),
    );
  }

  /** Replaces every field of an existing lesson. */
  update(lesson: LessonRecord): void {
    withSqlite("playbook", "update a lesson", () =>
      this.db
        .prepare(
          `UPDATE lessons SET owner = @owner, trigger = @trigger, anti_pattern = @anti_pattern, correct_pattern = @correct_pattern,
             domains = @domains, confidence = @confidence, source = @source, source_challenge_hash = @source_challenge_hash,
             challenge_text_hash = @challenge_text_hash, state = @state, archived_reason = @archived_reason, visibility = @visibility,
             verified = @verified, pinned = @pinned, retrievals = @retrievals, helpful_retrievals = @helpful_retrievals,
             times_added = @times_added, created_at = @created_at, updated_at = @updated_at,
             last_retrieved_at = @last_retrieved_at, last_helpful_at = @last_helpful_at
           WHERE id = @id`,
        )
        .run(toRow(lesson)),
    );
  }

  setState(id: string, state: LessonState, reason: ArchiveReason | "", now: number): void {
    withSqlite("playbook", "change a lesson's state", () =>
      this.db.prepare("UPDATE lessons SET state = ?, archived_reason = ?, updated_at = ? WHERE id = ?").run(state, reason, now, id),
    );
  }

  /** Counts one retrieval of each lesson by `agent` and remembers it for credit. */
  recordRetrievals(retrievalId: string, agent: string, lessonIds: readonly string[], now: number): void {
    withSqlite("playbook", "record retrievals", () => {
      const bump = this.db.prepare("UPDATE lessons SET retrievals = retrievals + 1, last_retrieved_at = ? WHERE id = ?");
      const remember = this.db.prepare("INSERT INTO lesson_retrievals (retrieval_id, agent, lesson_id, at) VALUES (?, ?, ?, ?)");
      this.db.transaction(() => {
        for (const id of lessonIds) {
          bump.run(now, id);
          remember.run(retrievalId, agent, id, now);
        }
      })();
    });
  }

  /**
   * Credits every uncredited retrieval `agent` saw at or after `since` (each at most once) and
   * returns the lessons credited, with how many retrievals each.
   */
  creditSince(agent: string, since: number, now: number): Map<string, number> {
    return withSqlite("playbook", "credit retrievals", () =>
      this.db.transaction(() => {
        const rows = this.db
          .prepare("SELECT id, lesson_id FROM lesson_retrievals WHERE agent = ? AND at >= ? AND credited = 0")
          .all(agent, since) as Array<{ id: number; lesson_id: string }>;
        const counts = new Map<string, number>();
        for (const row of rows) counts.set(row.lesson_id, (counts.get(row.lesson_id) ?? 0) + 1);
        const mark = this.db.prepare("UPDATE lesson_retrievals SET credited = 1 WHERE id = ?");
        for (const row of rows) mark.run(row.id);
        const bump = this.db.prepare(
          "UPDATE lessons SET helpful_retrievals = min(retrievals, helpful_retrievals + ?), last_helpful_at = ? WHERE id = ?",
        );
        for (const [lessonId, n] of counts) bump.run(n, now, lessonId);
        return counts;
      })(),
    );
  }

  /** Credits the latest uncredited retrieval of one lesson by `agent`; false when there is none. */
  creditLatest(agent: string, lessonId: string, now: number): boolean {
    return withSqlite("playbook", "credit a retrieval", () =>
      this.db.transaction(() => {
        const row = this.db
          .prepare("SELECT id FROM lesson_retrievals WHERE agent = ? AND lesson_id = ? AND credited = 0 ORDER BY at DESC, id DESC LIMIT 1")
          .get(agent, lessonId) as { id: number } | undefined;
        if (!row) return false;
        this.db.prepare("UPDATE lesson_retrievals SET credited = 1 WHERE id = ?").run(row.id);
        this.db
          .prepare("UPDATE lessons SET helpful_retrievals = min(retrievals, helpful_retrievals + 1), last_helpful_at = ? WHERE id = ?")
          .run(now, lessonId);
        return true;
      })(),
    );
  }

  /** Forgets retrievals older than `before`: past every credit window, they can never be credited. */
  forgetRetrievalsBefore(before: number): void {
    withSqlite("playbook", "forget old retrievals", () => this.db.prepare("DELETE FROM lesson_retrievals WHERE at < ?").run(before));
  }

  meta(key: string): string | undefined {
    return withSqlite(
      "playbook",
      "read playbook metadata",
      () => (this.db.prepare("SELECT value FROM playbook_meta WHERE key = ?").get(key) as { value: string } | undefined)?.value,
    );
  }

  setMeta(key: string, value: string): void {
    withSqlite("playbook", "write playbook metadata", () =>
      this.db
        .prepare("INSERT INTO playbook_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value")
        .run(key, value),
    );
  }
}

function fromRow(row: LessonRow): LessonRecord {
  return {
    id: row.id,
    owner: row.owner,
    trigger: row.trigger,
    antiPattern: row.anti_pattern,
    correctPattern: row.correct_pattern,
    domains: JSON.parse(row.domains) as string[],
    confidence: row.confidence,
    source: row.source,
    sourceChallengeHash: row.source_challenge_hash,
    challengeTextHash: row.challenge_text_hash,
    state: row.state as LessonState,
    archivedReason: row.archived_reason as ArchiveReason | "",
    visibility: row.visibility as LessonVisibility,
    verified: row.verified === 1,
    pinned: row.pinned === 1,
    retrievals: row.retrievals,
    helpfulRetrievals: row.helpful_retrievals,
    timesAdded: row.times_added,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    lastRetrievedAt: row.last_retrieved_at ?? undefined,
    lastHelpfulAt: row.last_helpful_at ?? undefined,
  };
}

function toRow(lesson: LessonRecord): LessonRow {
  return {
    id: lesson.id,
    owner: lesson.owner,
    trigger: lesson.trigger,
    anti_pattern: lesson.antiPattern,
    correct_pattern: lesson.correctPattern,
    domains: JSON.stringify(lesson.domains),
    confidence: lesson.confidence,
    source: lesson.source,
    source_challenge_hash: lesson.sourceChallengeHash,
    challenge_text_hash: lesson.challengeTextHash,
    state: lesson.state,
    archived_reason: lesson.archivedReason,
    visibility: lesson.visibility,
    verified: lesson.verified ? 1 : 0,
    pinned: lesson.pinned ? 1 : 0,
    retrievals: lesson.retrievals,
    helpful_retrievals: lesson.helpfulRetrievals,
    times_added: lesson.timesAdded,
    created_at: lesson.createdAt,
    updated_at: lesson.updatedAt,
    last_retrieved_at: lesson.lastRetrievedAt ?? null,
    last_helpful_at: lesson.lastHelpfulAt ?? null,
  };
}
