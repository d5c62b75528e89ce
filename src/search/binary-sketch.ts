/**
 * The approximate path of the embedded vector index (docs/routing.md#approximate-search): every
 * entry's vector in memory with a one-bit-per-dimension sketch of it, scanned with the filter
 * applied to each entry before its distance is even estimated, then the closest candidates
 * re-ranked exactly in float.
 *
 * Why not an HNSW graph or sqlite-vec's own quantised columns: measured at 100,000 MiniLM vectors,
 * sqlite-vec's KNN over a `bit[384]` column costs more than its exact float scan once `k` reaches
 * the ~1,000 candidates a re-rank needs for recall@5 0.97 (its per-chunk top-k dominates, not the
 * distance), and the npm HNSW libraries either have no filtered search (usearch) or need a compiler
 * at install (hnswlib-node) and a second file to keep in step with `registry.db` after a crash. A sketch
 * derived from the table at start-up has nothing of its own on disk: `registry.db` stays the one
 * source, and the filter stays inside the search.
 */
import type { VectorIndexEntry, VectorSearchFilter, VectorSearchHit } from "./vector-index.js";
import { audiencesOf } from "./vector-index.js";

/** One entry as the sketch keeps it: its vector and the filterable values of its payload. */
export interface SketchEntry {
  readonly id: string;
  readonly vector: Float32Array;
  readonly status: string;
  readonly owner: string;
  readonly visibility: string;
  /** Every audience the entry is routed to ({@link audiencesOf}). */
  readonly audiences: readonly string[];
}

export interface BinarySketchOptions {
  /**
   * Candidates re-ranked exactly per search, at least; a search for more hits re-ranks 8 × its
   * limit. Measured at 100,000 MiniLM-like vectors with routing's filter (`npm run bench:scale`'s
   * library, docs/routing.md#approximate-search): 4,096 gave recall@5 0.960 of the exact search in
   * 12 ms, 8,192 gave 0.984 in 16 ms, 16,384 gave 0.996 in 32 ms.
   * @default 8192
   */
  readonly candidates?: number;
}

/** See {@link BinarySketchOptions.candidates}: the fewest that kept recall@5 at or above 0.98. */
export const DEFAULT_CANDIDATES = 8192;
const WORD_BITS = 32;
/** Set bits of every 16-bit value: a popcount in two lookups per 32-bit word. */
const POPCOUNT16 = (() => {
  const table = new Uint8Array(1 << 16);
  for (let i = 1; i < table.length; i++) table[i] = (i & 1) + (table[i >> 1] as number);
  return table;
})();

/**
 * An in-memory, filtered, approximate nearest-neighbour search over unit vectors (cosine).
 * Entries live in dense slots (a removal moves the last entry into the hole), so a search is one
 * pass over typed arrays. Not thread-safe; the caller serialises writes with its own.
 */
export class BinarySketch {
  private readonly words: number;
  private readonly candidates: number;
  private capacity = 0;
  private size = 0;
  private ids: string[] = [];
  private readonly slotOf = new Map<string, number>();
  private vectors = new Float32Array(0);
  private codes = new Int32Array(0);
  private statuses = new Int32Array(0);
  private owners = new Int32Array(0);
  private visibilities = new Int32Array(0);
  /** The first audience of each slot; further ones (grantees) in `moreAudiences`. */
  private firstAudiences = new Int32Array(0);
  private moreAudiences: Array<Int32Array | undefined> = [];
  /** Interned payload strings: filters compare integers in the scan. */
  private readonly codesOf = new Map<string, number>();
  /**
   * The sign of each dimension is taken relative to this mean: sentence embeddings are far from
   * centred (some dimensions keep one sign for almost every text), and raw signs wasted those
   * bits (recall@5 0.966 against 0.982 centred, at 1,000 candidates of 100,000).
   */
  private center: Float32Array;
  /** Entries when the centre was last computed; past twice that many it is computed again. */
  private centeredAt = 0;
  private hamming = new Uint16Array(0);

  constructor(
    readonly dimensions: number,
    options: BinarySketchOptions = {},
  ) {
    this.words = Math.ceil(dimensions / WORD_BITS);
    this.candidates = Math.max(1, Math.floor(options.candidates ?? DEFAULT_CANDIDATES));
    this.center = new Float32Array(dimensions);
  }

  /** How many entries the sketch holds. */
  get count(): number {
    return this.size;
  }

  /** Fills the sketch with `entries` (replacing any with the same id), then centres the codes on their mean. */
  load(entries: Iterable<SketchEntry>): void {
    for (const entry of entries) this.put(entry);
    this.recenter();
  }

  /** Inserts or replaces entries by id. */
  upsert(entries: readonly VectorIndexEntry[]): void {
    for (const { id, vector, payload } of entries) {
      this.put({
        id,
        vector,
        status: payload.status,
        owner: payload.owner,
        visibility: payload.visibility,
        audiences: audiencesOf(payload),
      });
    }
    if (this.size > 2 * Math.max(1, this.centeredAt)) this.recenter();
  }

  /** Removes entries by id; unknown ids are ignored. */
  remove(ids: readonly string[]): void {
    for (const id of ids) {
      const slot = this.slotOf.get(id);
      if (slot === undefined) continue;
      const last = this.size - 1;
      if (slot !== last) this.move(last, slot);
      this.slotOf.delete(id);
      this.ids.length = last;
      this.moreAudiences.length = last;
      this.size = last;
    }
  }

  /**
   * The `limit` nearest entries that pass `filter` (the port's semantics: AND-ed allowlists, an
   * entry passing the audience list when any of its audiences is listed), most similar first,
   * scores being exact cosine similarities. Entries that fail the filter are skipped before
   * their distance is estimated, so the search returns `limit` hits whenever that many match.
   */
  search(query: Float32Array, limit: number, filter: VectorSearchFilter | undefined): VectorSearchHit[] {
    if (limit <= 0 || this.size === 0) return [];
    const allowed = this.compileFilter(filter);
    if (allowed === "nothing") return [];
    const queryCode = new Int32Array(this.words);
    this.encode(query, 0, queryCode, 0);
    const histogram = new Int32Array(this.dimensions + 1);
    const hamming = this.hamming;
    const words = this.words;
    const codes = this.codes;
    let matching = 0;
    for (let slot = 0; slot < this.size; slot++) {
      if (allowed && !this.passes(slot, allowed)) {
        hamming[slot] = NOT_A_MATCH;
        continue;
      }
      let distance = 0;
      const at = slot * words;
      for (let w = 0; w < words; w++) {
        const x = (codes[at + w] as number) ^ (queryCode[w] as number);
        distance += (POPCOUNT16[x & 0xffff] as number) + (POPCOUNT16[x >>> 16] as number);
      }
      hamming[slot] = distance;
      (histogram[distance] as number)++;
      matching++;
    }
    if (matching === 0) return [];
    // The smallest Hamming radius that holds the wanted number of candidates (a counting sort).
    const wanted = Math.max(this.candidates, 8 * limit);
    let radius = 0;
    for (let seen = 0; radius < this.dimensions; radius++) {
      seen += histogram[radius] as number;
      if (seen >= wanted) break;
    }
    const scored: VectorSearchHit[] = [];
    const dimensions = this.dimensions;
    const vectors = this.vectors;
    for (let slot = 0; slot < this.size; slot++) {
      if ((hamming[slot] as number) > radius) continue;
      let dot = 0;
      const at = slot * dimensions;
      for (let d = 0; d < dimensions; d++) dot += (vectors[at + d] as number) * (query[d] as number);
      scored.push({ id: this.ids[slot] as string, score: dot });
    }
    scored.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return scored.slice(0, limit);
  }

  private put(entry: SketchEntry): void {
    if (entry.vector.length !== this.dimensions) throw new RangeError(`expected ${this.dimensions} dimensions, got ${entry.vector.length}`);
    let slot = this.slotOf.get(entry.id);
    if (slot === undefined) {
      slot = this.size++;
      this.grow(this.size);
      this.slotOf.set(entry.id, slot);
      this.ids[slot] = entry.id;
    }
    this.vectors.set(entry.vector, slot * this.dimensions);
    this.encode(this.vectors, slot * this.dimensions, this.codes, slot * this.words);
    this.statuses[slot] = this.intern(entry.status);
    this.owners[slot] = this.intern(entry.owner);
    this.visibilities[slot] = this.intern(entry.visibility);
    const [first, ...more] = entry.audiences;
    this.firstAudiences[slot] = first === undefined ? NO_CODE : this.intern(first);
    this.moreAudiences[slot] = more.length > 0 ? Int32Array.from(more, (audience) => this.intern(audience)) : undefined;
  }

  /** Copies slot `from` into slot `to` (a removal fills its hole with the last entry). */
  private move(from: number, to: number): void {
    const id = this.ids[from] as string;
    this.ids[to] = id;
    this.slotOf.set(id, to);
    this.vectors.copyWithin(to * this.dimensions, from * this.dimensions, (from + 1) * this.dimensions);
    this.codes.copyWithin(to * this.words, from * this.words, (from + 1) * this.words);
    this.statuses[to] = this.statuses[from] as number;
    this.owners[to] = this.owners[from] as number;
    this.visibilities[to] = this.visibilities[from] as number;
    this.firstAudiences[to] = this.firstAudiences[from] as number;
    this.moreAudiences[to] = this.moreAudiences[from];
  }

  private grow(needed: number): void {
    if (needed <= this.capacity) return;
    const capacity = Math.max(1024, this.capacity * 2, needed);
    const widen = <T extends Float32Array | Int32Array | Uint16Array>(old: T, make: (n: number) => T, per: number): T => {
      const next = make(capacity * per);
      next.set(old as never);
      return next;
    };
    this.vectors = widen(this.vectors, (n) => new Float32Array(n), this.dimensions);
    this.codes = widen(this.codes, (n) => new Int32Array(n), this.words);
    this.statuses = widen(this.statuses, (n) => new Int32Array(n), 1);
    this.owners = widen(this.owners, (n) => new Int32Array(n), 1);
    this.visibilities = widen(this.visibilities, (n) => new Int32Array(n), 1);
    this.firstAudiences = widen(this.firstAudiences, (n) => new Int32Array(n), 1);
    this.hamming = new Uint16Array(capacity);
    this.capacity = capacity;
  }

  /** Recomputes the centre as the mean of every vector held and re-encodes every code. */
  private recenter(): void {
    const center = new Float32Array(this.dimensions);
    for (let slot = 0; slot < this.size; slot++) {
      const at = slot * this.dimensions;
      for (let d = 0; d < this.dimensions; d++) (center[d] as number) += this.vectors[at + d] as number;
    }
    if (this.size > 0) for (let d = 0; d < this.dimensions; d++) (center[d] as number) /= this.size;
    this.center = center;
    this.centeredAt = this.size;
    for (let slot = 0; slot < this.size; slot++) this.encode(this.vectors, slot * this.dimensions, this.codes, slot * this.words);
  }

  private encode(vector: Float32Array, from: number, out: Int32Array, at: number): void {
    for (let w = 0; w < this.words; w++) {
      let word = 0;
      for (let bit = 0; bit < WORD_BITS; bit++) {
        const d = w * WORD_BITS + bit;
        if (d < this.dimensions && (vector[from + d] as number) > (this.center[d] as number)) word |= 1 << bit;
      }
      out[at + w] = word;
    }
  }

  private intern(value: string): number {
    let code = this.codesOf.get(value);
    if (code === undefined) {
      code = this.codesOf.size;
      this.codesOf.set(value, code);
    }
    return code;
  }

  /** Each listed field as a membership table over interned codes; undefined: no filter at all. */
  private compileFilter(filter: VectorSearchFilter | undefined): CompiledFilter | undefined | "nothing" {
    if (!filter) return undefined;
    const table = (values: readonly string[] | undefined): Uint8Array | undefined | "nothing" => {
      if (values === undefined) return undefined;
      const members = new Uint8Array(this.codesOf.size);
      let any = false;
      for (const value of values) {
        const code = this.codesOf.get(value);
        if (code !== undefined) {
          members[code] = 1;
          any = true;
        }
      }
      return any ? members : "nothing";
    };
    const statuses = table(filter.statuses);
    const owners = table(filter.owners);
    const visibility = table(filter.visibility);
    const audiences = table(filter.audiences);
    if (statuses === "nothing" || owners === "nothing" || visibility === "nothing" || audiences === "nothing") return "nothing";
    return { statuses, owners, visibility, audiences };
  }

  private passes(slot: number, allowed: CompiledFilter): boolean {
    if (allowed.statuses && allowed.statuses[this.statuses[slot] as number] !== 1) return false;
    if (allowed.owners && allowed.owners[this.owners[slot] as number] !== 1) return false;
    if (allowed.visibility && allowed.visibility[this.visibilities[slot] as number] !== 1) return false;
    if (!allowed.audiences) return true;
    if (allowed.audiences[this.firstAudiences[slot] as number] === 1) return true;
    const more = this.moreAudiences[slot];
    if (!more) return false;
    for (const code of more) if (allowed.audiences[code] === 1) return true;
    return false;
  }
}

interface CompiledFilter {
  readonly statuses: Uint8Array | undefined;
  readonly owners: Uint8Array | undefined;
  readonly visibility: Uint8Array | undefined;
  readonly audiences: Uint8Array | undefined;
}

/** A Hamming distance no code can have: marks a slot the filter left out. */
const NOT_A_MATCH = 0xffff;
/** An entry with no audience (never produced by {@link audiencesOf}, kept total anyway). */
const NO_CODE = -1;
