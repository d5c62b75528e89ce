/**
 * The port every vector index adapter implements: sqlite-vec inside `registry.db` by default,
 * Qdrant when the deployment scales out. Routing speaks only these types, never a backend's.
 */

import { createHash } from "node:crypto";

/** The `type` every skill point carries, so a shared Qdrant collection never mixes in foreign points. */
export const SKILL_PAYLOAD_TYPE = "acquired_skill";

/**
 * Who may see a skill: its owner only, its owner and its grantees (`grantAudiences`), or every
 * caller. A system skill is indexed as public (every agent sees it).
 */
export type SkillVisibility = "private" | "internal" | "public";

/** The audience of every public skill (see {@link audienceOf}). */
export const PUBLIC_AUDIENCE = "public";

/**
 * Who a skill is routed to, as one filterable value derived from owner and visibility: every
 * index stores it beside `owner` and `visibility` (adapters compute it with this function, never
 * take it from a caller), so "an agent's own skills OR the public ones" is the single allowlist
 * `audiences: [PUBLIC_AUDIENCE, audienceOf(agentId, "private")]` instead of two searches.
 *
 * Public: {@link PUBLIC_AUDIENCE}. Private: `~` and 11 base64url characters of the owner's
 * SHA-256, not the owner id itself, because
 * - `public` is a valid agent id: an agent so named would otherwise share its private skills'
 *   audience with every public skill (`~` cannot start an agent id, so the two never meet);
 * - sqlite-vec keeps only the first 12 bytes of a text metadata value in its chunks and looks the
 *   rest up row by row, so longer ids sharing a 12-byte prefix (`research-assistant-07`, `-08` …)
 *   made a filtered scan ~2.4x slower (50k rows: 55 vs 23 ms); a private audience is 12 bytes.
 * 66 bits of hash: two owners sharing an audience is not a practical concern, and the registry
 * re-checks every routed skill's access anyway. Anything but `public` counts as private.
 */
export function audienceOf(owner: string, visibility: string): string {
  if (visibility === "public") return PUBLIC_AUDIENCE;
  return `~${createHash("sha256").update(owner, "utf8").digest("base64url").slice(0, 11)}`;
}

/** The audience of an agent: its own skills' and those granted to it (the same value: an owner needs no grant). */
export function agentAudience(agentId: string): string {
  return audienceOf(agentId, "private");
}

/**
 * The audience of an end user (skills granted to the user, seen by delegating agents acting for
 * them): `^` and 11 base64url characters of a hash kept apart from agents' (`user\0` prefix), so an
 * agent and a user of the same id never share an audience. 12 bytes, like an agent's.
 */
export function userAudience(userId: string): string {
  return `^${createHash("sha256").update(`user\0${userId}`, "utf8").digest("base64url").slice(0, 11)}`;
}

/**
 * Every audience an entry is routed to (docs/routing.md#scoping): `public` alone for a public
 * skill; otherwise its owner's and each grantee's. An entry matches a search when ANY of its
 * audiences is in the filter's allowlist, so "own OR public OR granted to me OR to my user" is one
 * allowlist of at most three values.
 */
export function audiencesOf(payload: Pick<SkillIndexPayload, "owner" | "visibility" | "grantAudiences">): string[] {
  if (payload.visibility === "public") return [PUBLIC_AUDIENCE];
  return [...new Set([agentAudience(payload.owner), ...(payload.grantAudiences ?? [])])];
}

/**
 * What an index keeps beside each vector: enough to filter without asking the registry. Adapters
 * also store the derived {@link audienceOf}(owner, visibility) and filter on it (`audiences`).
 */
export interface SkillIndexPayload {
  readonly type: typeof SKILL_PAYLOAD_TYPE;
  /** The skill's name; also the entry's id in the port. */
  readonly name: string;
  /** The agent that registered the skill. */
  readonly owner: string;
  readonly visibility: SkillVisibility;
  /** The registry status (`active`, `degraded`, `retired` …, or `disabled` while switched off); routing filters on it. */
  readonly status: string;
  /**
   * The audiences of the skill's grantees ({@link agentAudience}, {@link userAudience}); ignored
   * for a public skill. Absent: no grants.
   */
  readonly grantAudiences?: readonly string[];
}

/** One vector to store: `id` is the skill name. */
export interface VectorIndexEntry {
  readonly id: string;
  /** L2-normalized by the embedder; its length must match the index's dimensions. */
  readonly vector: Float32Array;
  readonly payload: SkillIndexPayload;
}

/**
 * Allowlists, combined with AND. A field left out does not filter; an EMPTY list matches nothing,
 * so a caller that computed "no owners may be seen" never widens to "everything".
 */
export interface VectorSearchFilter {
  readonly statuses?: readonly string[];
  readonly owners?: readonly string[];
  readonly visibility?: readonly string[];
  /**
   * Audience values ({@link audiencesOf}): an entry passes when any of its audiences is listed.
   * `[PUBLIC_AUDIENCE, agentAudience(agent), userAudience(user)]` is "own OR public OR granted".
   */
  readonly audiences?: readonly string[];
}

export interface VectorSearchOptions {
  /** At most this many hits. The embedded index caps it at {@link MAX_SEARCH_LIMIT}. */
  readonly limit: number;
  readonly filter?: VectorSearchFilter;
}

/** One hit: `score` is the cosine similarity in [-1, 1], higher is closer. */
export interface VectorSearchHit {
  readonly id: string;
  readonly score: number;
}

/** The largest `limit` every adapter honours (sqlite-vec refuses a KNN `k` above 4096). */
export const MAX_SEARCH_LIMIT = 4096;

/**
 * A nearest-neighbour index of skill vectors.
 *
 * Every adapter must pass `vector-index.contract.ts`: results ordered by cosine similarity,
 * upsert replaces in place, filters apply before the limit (a filtered search still returns
 * `limit` hits when that many match), and `ensure` with new dimensions starts empty.
 *
 * Adapter failures surface as `SkillEngineError`; an unreachable backend as
 * `VectorIndexUnavailableError` (UNAVAILABLE), which routing treats as "fall back".
 */
export interface VectorIndex {
  /** Short backend name for logs and routing responses (`sqlite-vec`, `qdrant`). */
  readonly kind: string;
  /**
   * Creates the index for vectors of this many dimensions. Idempotent when the dimensions are
   * unchanged; when they differ (the embedder changed) the old index is dropped, so the caller
   * must re-embed and upsert every skill.
   */
  ensure(dimensions: number): Promise<void>;
  /** Inserts or replaces entries by id (the skill name). */
  upsert(entries: readonly VectorIndexEntry[]): Promise<void>;
  /** Removes entries by id; unknown ids are ignored. */
  remove(ids: readonly string[]): Promise<void>;
  /** The nearest entries to `vector` that pass the filter, most similar first. */
  search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorSearchHit[]>;
  /** How many entries the index holds. */
  count(): Promise<number>;
  /** The id of every entry the index holds (a re-sync removes from a copy what the original lacks). */
  ids(): Promise<string[]>;
  /**
   * Every entry with its vector and payload, in id order, `batchSize` at a time (a re-sync copies
   * them). Each batch is read on its own, so writes may go on between batches.
   */
  scan(batchSize: number): AsyncIterable<VectorIndexEntry[]>;
  /** Releases what the adapter opened itself (never a database handle it was given). */
  close(): Promise<void>;
}

/** True when the filter admits nothing, so adapters can answer without a round trip. */
export function filterMatchesNothing(filter: VectorSearchFilter | undefined): boolean {
  if (!filter) return false;
  return filter.statuses?.length === 0 || filter.owners?.length === 0 || filter.visibility?.length === 0 || filter.audiences?.length === 0;
}
