/**
 * The learning tables in registry.db (docs/learning.md#storage): recorded sessions (their pattern
 * hashes, so a session counts once), pattern counts per agent (within a quota), the
 * `skill_candidates` and the evolution events of auto-created skills. The tables are created by
 * registry.db's migrations (src/schema).
 */
import type Database from "better-sqlite3";
import { withSqlite } from "../sqlite/index.js";
import { type SequenceStep, sessionWindows } from "./sequence.js";

export const CANDIDATE_STATUSES = ["candidate", "promoted", "dismissed"] as const;
export type CandidateStatus = (typeof CANDIDATE_STATUSES)[number];

/** A `skill_candidates` row. */
export interface CandidateRecord {
  readonly id: number;
  readonly agentId: string;
  readonly hash: string;
  readonly name: string;
  readonly description: string;
  readonly toolSequence: SequenceStep[];
  readonly sessionKeys: string[];
  readonly occurrences: number;
  readonly status: CandidateStatus;
  readonly createdAt: string;
  readonly promotedAt: string | undefined;
  /** The arguments of the latest session it appeared in, one per step: the promoted skill's test payload. */
  readonly exampleArguments: unknown[];
  /** The skill it became or updated. */
  readonly skillName: string;
}

export interface EvolutionRecord {
  readonly id: number;
  readonly agentId: string;
  readonly skillName: string;
  readonly fromVersion: number;
  readonly toVersion: number;
  readonly candidateId: number;
  readonly overlap: number;
  readonly summary: string;
  readonly at: string;
}

interface CandidateRow {
  id: number;
  agent_id: string;
  hash: string;
  name: string;
  description: string | null;
  tool_sequence: string;
  session_keys: string;
  occurrences: number;
  status: string;
  created_at: string;
  promoted_at: string | null;
  example_arguments: string;
  skill_name: string;
}

/** Session keys kept on a candidate row (occurrences keeps the true count). */
const SESSION_KEYS_KEPT = 100;
/**
 * Bytes of a pattern hash kept in a session's set: the set only tells whether this session already
 * counted a pattern, and 64 bits make a false "already counted" among one session's ~800 patterns
 * vanishingly unlikely, at half the size of the whole hash.
 */
const SESSION_HASH_BYTES = 8;

/** A pattern hash as a session's set keeps it. */
export function sessionHashKey(hash: string): string {
  return hash.slice(0, SESSION_HASH_BYTES * 2);
}
/** Session keys kept per pattern below the threshold (enough to name a new candidate's sessions). */
const PATTERN_KEYS_KEPT = 20;
/** What a checkpoint of the learning connection cuts the WAL back to (docs/learning.md#large-sessions). */
const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;

export class LearningStore {
  /** Prepared statements by SQL text: RecordSession runs the same few hundreds of times a call. */
  private readonly statements = new Map<string, Database.Statement>();

  private prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Database.Statement<P, R> {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement as unknown as Database.Statement<P, R>;
  }

  constructor(private readonly db: Database.Database) {
    // Checkpoints by this connection cut a WAL that one burst of writes grew back to this size
    // (docs/learning.md#large-sessions); SQLite otherwise keeps the file at its largest.
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  }

  transaction<T>(what: string, work: () => T): T {
    return withSqlite("registry", what, () => this.db.transaction(work)());
  }

  /**
   * A session as recorded before: whether it was recorded to the end (`recorded`), and the patterns
   * it already counted as {@link sessionHashKey}s (kept as 8-byte binary, in the session's row and in
   * the parts each slice of a recording added), empty for a new session.
   */
  session(agentId: string, sessionKey: string): { recorded: boolean; hashes: Set<string> } {
    const row = this.prepare<[string, string], { hashes: Buffer }>(
      "SELECT hashes FROM learning_sessions WHERE agent_id = ? AND session_key = ?",
    ).get(agentId, sessionKey);
    const hashes = new Set<string>();
    const add = (blob: Buffer): void => {
      for (let i = 0; i + SESSION_HASH_BYTES <= blob.length; i += SESSION_HASH_BYTES) {
        hashes.add(blob.subarray(i, i + SESSION_HASH_BYTES).toString("hex"));
      }
    };
    if (row) add(row.hashes);
    for (const part of this.prepare<[string, string], { hashes: Buffer }>(
      "SELECT hashes FROM learning_session_parts WHERE agent_id = ? AND session_key = ? ORDER BY part",
    ).iterate(agentId, sessionKey)) {
      add(part.hashes);
    }
    return { recorded: row !== undefined, hashes };
  }

  /** Marks a session recorded to the end; the hashes it counted are in its parts (see {@link countSessionSlice}). */
  saveSession(agentId: string, sessionKey: string, toolCalls: number, at: string): void {
    this.prepare(
      `INSERT INTO learning_sessions (agent_id, session_key, hashes, tool_calls, recorded_at) VALUES (?, ?, X'', ?, ?)
         ON CONFLICT (agent_id, session_key) DO UPDATE SET tool_calls = excluded.tool_calls, recorded_at = excluded.recorded_at`,
    ).run(agentId, sessionKey, toolCalls, at);
  }

  /**
   * Counts one slice of a session's patterns (not counted for this session before): one more session
   * for each, last seen `at`, and adds them to the session's set as one part, so whatever slices a
   * stopped recording committed are never counted twice. Answers each pattern's count now.
   */
  countSessionSlice(agentId: string, sessionKey: string, hashes: readonly string[], at: string): Map<string, number> {
    const upsert = this.prepare<[string, string, string, string], { sessions: number }>(
      `INSERT INTO learning_patterns (agent_id, hash, sessions, session_keys, last_seen) VALUES (?, ?, 1, json_array(?), ?)
       ON CONFLICT (agent_id, hash) DO UPDATE SET sessions = sessions + 1, last_seen = excluded.last_seen,
         session_keys = CASE WHEN json_array_length(session_keys) < ${PATTERN_KEYS_KEPT}
                             THEN json_insert(session_keys, '$[#]', excluded.session_keys ->> 0) ELSE session_keys END
       RETURNING sessions`,
    );
    const counts = new Map<string, number>();
    for (const hash of hashes) counts.set(hash, (upsert.get(agentId, hash, sessionKey, at) as { sessions: number }).sessions);
    if (hashes.length > 0) {
      this.prepare(
        `INSERT INTO learning_session_parts (agent_id, session_key, part, hashes)
           VALUES (@agent, @key, (SELECT COALESCE(MAX(part), -1) + 1 FROM learning_session_parts WHERE agent_id = @agent AND session_key = @key), @hashes)`,
      ).run({ agent: agentId, key: sessionKey, hashes: Buffer.from(hashes.map(sessionHashKey).join(""), "hex") });
    }
    return counts;
  }

  /** Patterns (pattern counts) an agent has stored. */
  patternCount(agentId: string): number {
    return this.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM learning_patterns WHERE agent_id = ?").get(agentId)?.n ?? 0;
  }

  /**
   * Removes up to `limit` of an agent's patterns for its quota (docs/learning.md#pattern-quota): the
   * ones last seen longest ago first and, of those last seen together, the ones seen in the fewest
   * sessions; a pattern that is one of the agent's candidates (any status) is never removed, since its
   * count is the candidate's. Answers how many went.
   */
  evictPatterns(agentId: string, limit: number): number {
    return this.prepare(
      `DELETE FROM learning_patterns WHERE agent_id = @agent AND hash IN (
         SELECT p.hash FROM learning_patterns AS p
          WHERE p.agent_id = @agent AND NOT EXISTS (SELECT 1 FROM skill_candidates AS c WHERE c.agent_id = @agent AND c.hash = p.hash)
          ORDER BY p.last_seen, p.sessions LIMIT @limit)`,
    ).run({ agent: agentId, limit }).changes;
  }

  /** Distinct sessions a pattern appeared in. */
  sessionsOf(agentId: string, hash: string): number {
    return (
      this.prepare<[string, string], { sessions: number }>("SELECT sessions FROM learning_patterns WHERE agent_id = ? AND hash = ?").get(
        agentId,
        hash,
      )?.sessions ?? 0
    );
  }

  /** Distinct sessions a pattern appeared in, and the first session keys kept for it. */
  pattern(agentId: string, hash: string): { sessions: number; sessionKeys: string[] } {
    const row = this.prepare<[string, string], { sessions: number; session_keys: string }>(
      "SELECT sessions, session_keys FROM learning_patterns WHERE agent_id = ? AND hash = ?",
    ).get(agentId, hash);
    return { sessions: row?.sessions ?? 0, sessionKeys: row ? (JSON.parse(row.session_keys) as string[]) : [] };
  }

  candidateByHash(agentId: string, hash: string): CandidateRecord | undefined {
    const row = this.prepare<[string, string], CandidateRow>("SELECT * FROM skill_candidates WHERE agent_id = ? AND hash = ?").get(
      agentId,
      hash,
    );
    return row ? toCandidate(row) : undefined;
  }

  candidate(id: number): CandidateRecord | undefined {
    const row = this.prepare<[number], CandidateRow>("SELECT * FROM skill_candidates WHERE id = ?").get(id);
    return row ? toCandidate(row) : undefined;
  }

  /**
   * Candidates of one agent (every agent's with `agentId` undefined), optionally of one status, by id;
   * with `page`, a keyset page: those after id `page.after`, at most `page.limit`.
   */
  candidates(
    agentId: string | undefined,
    status: CandidateStatus | undefined,
    page: { readonly after?: number; readonly limit?: number } = {},
  ): CandidateRecord[] {
    const conditions: string[] = ["id > ?"];
    const params: Array<string | number> = [page.after ?? 0];
    if (agentId !== undefined) {
      conditions.push("agent_id = ?");
      params.push(agentId);
    }
    if (status !== undefined) {
      conditions.push("status = ?");
      params.push(status);
    }
    return this.prepare<Array<string | number>, CandidateRow>(
      `SELECT * FROM skill_candidates WHERE ${conditions.join(" AND ")} ORDER BY id LIMIT ?`,
    )
      .all(...params, page.limit ?? -1)
      .map(toCandidate);
  }

  /** Whether a pattern lies inside the sequence of one of the agent's candidates (any status). */
  isCovered(agentId: string, hash: string): boolean {
    return this.prepare("SELECT 1 FROM learning_covered WHERE agent_id = ? AND hash = ? LIMIT 1").get(agentId, hash) !== undefined;
  }

  private cover(agentId: string, candidateId: number, sequence: readonly SequenceStep[]): void {
    const insert = this.prepare("INSERT OR IGNORE INTO learning_covered (agent_id, hash, candidate_id) VALUES (?, ?, ?)");
    for (const window of sessionWindows(sequence, 3, sequence.length)) insert.run(agentId, window.hash, candidateId);
  }

  /** Open candidates (status candidate) of an agent. */
  openCount(agentId: string): number {
    return (
      this.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM skill_candidates WHERE agent_id = ? AND status = 'candidate'").get(
        agentId,
      )?.n ?? 0
    );
  }

  /** The open candidate seen in the fewest sessions (the oldest of those). */
  weakestOpen(agentId: string): CandidateRecord | undefined {
    const row = this.prepare<[string], CandidateRow>(
      "SELECT * FROM skill_candidates WHERE agent_id = ? AND status = 'candidate' ORDER BY occurrences, id LIMIT 1",
    ).get(agentId);
    return row ? toCandidate(row) : undefined;
  }

  /** Removes an open candidate; its pattern keeps its count, so it can come back. */
  removeCandidate(id: number): void {
    this.prepare("DELETE FROM learning_covered WHERE candidate_id = ?").run(id);
    this.prepare("DELETE FROM skill_candidates WHERE id = ? AND status = 'candidate'").run(id);
  }

  insertCandidate(input: {
    agentId: string;
    hash: string;
    name: string;
    description: string;
    toolSequence: readonly SequenceStep[];
    sessionKeys: readonly string[];
    occurrences: number;
    exampleArguments: readonly unknown[];
    at: string;
  }): CandidateRecord {
    const info = this.prepare(
      `INSERT INTO skill_candidates (agent_id, hash, name, description, tool_sequence, session_keys, occurrences, created_at, example_arguments)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      input.agentId,
      input.hash,
      input.name,
      input.description,
      JSON.stringify(input.toolSequence),
      JSON.stringify(input.sessionKeys),
      input.occurrences,
      input.at,
      JSON.stringify(input.exampleArguments),
    );
    const id = Number(info.lastInsertRowid);
    this.cover(input.agentId, id, input.toolSequence);
    return this.candidate(id) as CandidateRecord;
  }

  /** A candidate seen in one more session: its count, keys and example arguments follow. */
  touchCandidate(id: number, occurrences: number, sessionKey: string, exampleArguments: readonly unknown[]): CandidateRecord {
    const current = this.candidate(id) as CandidateRecord;
    const keys = current.sessionKeys.includes(sessionKey)
      ? current.sessionKeys
      : [...current.sessionKeys, sessionKey].slice(-SESSION_KEYS_KEPT);
    this.prepare("UPDATE skill_candidates SET occurrences = ?, session_keys = ?, example_arguments = ? WHERE id = ?").run(
      occurrences,
      JSON.stringify(keys),
      JSON.stringify(exampleArguments),
      id,
    );
    return this.candidate(id) as CandidateRecord;
  }

  setStatus(id: number, status: CandidateStatus, at: string | undefined, skillName: string): CandidateRecord {
    this.prepare("UPDATE skill_candidates SET status = ?, promoted_at = COALESCE(?, promoted_at), skill_name = ? WHERE id = ?").run(
      status,
      at ?? null,
      skillName,
      id,
    );
    return this.candidate(id) as CandidateRecord;
  }

  /** Promoted candidates of one agent that made or updated a skill: the auto-created skills' sequences. */
  promotedSequences(agentId: string): CandidateRecord[] {
    return this.prepare<[string], CandidateRow>(
      "SELECT * FROM skill_candidates WHERE agent_id = ? AND status = 'promoted' AND skill_name != '' ORDER BY id DESC",
    )
      .all(agentId)
      .map(toCandidate);
  }

  addEvolution(event: Omit<EvolutionRecord, "id">): EvolutionRecord {
    const info = this.prepare(
      `INSERT INTO skill_evolution_events (agent_id, skill_name, from_version, to_version, candidate_id, overlap, summary, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(event.agentId, event.skillName, event.fromVersion, event.toVersion, event.candidateId, event.overlap, event.summary, event.at);
    return { ...event, id: Number(info.lastInsertRowid) };
  }

  /** Evolution events (of one skill, or all), by id; with `page`, those after id `page.after`, at most `page.limit`. */
  evolution(skillName: string | undefined, page: { readonly after?: number; readonly limit?: number } = {}): EvolutionRecord[] {
    const rows = this.prepare<Array<string | number>, Record<string, string | number>>(
      `SELECT * FROM skill_evolution_events WHERE id > ? ${skillName === undefined ? "" : "AND skill_name = ?"} ORDER BY id LIMIT ?`,
    ).all(page.after ?? 0, ...(skillName === undefined ? [] : [skillName]), page.limit ?? -1);
    return rows.map((row) => ({
      id: Number(row.id),
      agentId: String(row.agent_id),
      skillName: String(row.skill_name),
      fromVersion: Number(row.from_version),
      toVersion: Number(row.to_version),
      candidateId: Number(row.candidate_id),
      overlap: Number(row.overlap),
      summary: String(row.summary),
      at: String(row.at),
    }));
  }

  countsByStatus(): Record<CandidateStatus, number> {
    const counts: Record<CandidateStatus, number> = { candidate: 0, promoted: 0, dismissed: 0 };
    for (const row of this.prepare<[], { status: CandidateStatus; n: number }>(
      "SELECT status, COUNT(*) AS n FROM skill_candidates GROUP BY status",
    ).all())
      counts[row.status] = row.n;
    return counts;
  }

  isEmpty(): boolean {
    return this.prepare("SELECT 1 FROM skill_candidates LIMIT 1").get() === undefined;
  }

  /** Restores a mirrored candidate row as it was (rebuild); keeps its id. */
  restoreCandidate(record: CandidateRecord): void {
    this.prepare(
      `INSERT OR IGNORE INTO skill_candidates (id, agent_id, hash, name, description, tool_sequence, session_keys, occurrences, status,
                                                 created_at, promoted_at, example_arguments, skill_name)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      record.id,
      record.agentId,
      record.hash,
      record.name,
      record.description,
      JSON.stringify(record.toolSequence),
      JSON.stringify(record.sessionKeys),
      record.occurrences,
      record.status,
      record.createdAt,
      record.promotedAt ?? null,
      JSON.stringify(record.exampleArguments),
      record.skillName,
    );
    this.cover(record.agentId, record.id, record.toolSequence);
    // The pattern count never falls below what the candidate says, so the next session continues from it.
    this.prepare(
      `INSERT INTO learning_patterns (agent_id, hash, sessions) VALUES (?, ?, ?)
         ON CONFLICT (agent_id, hash) DO UPDATE SET sessions = MAX(sessions, excluded.sessions)`,
    ).run(record.agentId, record.hash, record.occurrences);
    this.prepare("UPDATE learning_patterns SET session_keys = ? WHERE agent_id = ? AND hash = ? AND session_keys = '[]'").run(
      JSON.stringify(record.sessionKeys.slice(0, PATTERN_KEYS_KEPT)),
      record.agentId,
      record.hash,
    );
  }

  restoreEvolution(event: EvolutionRecord): void {
    this.prepare(
      `INSERT OR IGNORE INTO skill_evolution_events (id, agent_id, skill_name, from_version, to_version, candidate_id, overlap, summary, at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      event.id,
      event.agentId,
      event.skillName,
      event.fromVersion,
      event.toVersion,
      event.candidateId,
      event.overlap,
      event.summary,
      event.at,
    );
  }
}

function toCandidate(row: CandidateRow): CandidateRecord {
  return {
    id: row.id,
    agentId: row.agent_id,
    hash: row.hash,
    name: row.name,
    description: row.description ?? "",
    toolSequence: JSON.parse(row.tool_sequence) as SequenceStep[],
    sessionKeys: JSON.parse(row.session_keys) as string[],
    occurrences: row.occurrences,
    status: CANDIDATE_STATUSES.find((s) => s === row.status) ?? "candidate",
    createdAt: row.created_at,
    promotedAt: row.promoted_at ?? undefined,
    exampleArguments: JSON.parse(row.example_arguments) as unknown[],
    skillName: row.skill_name,
  };
}
