import type Database from "better-sqlite3";
import type { Logger } from "pino";
import * as sqliteVec from "sqlite-vec";
import { errorMessage, FailedPreconditionError } from "../errors/index.js";
import { withSqlite } from "../sqlite/index.js";
import { BinarySketch, type BinarySketchOptions, type SketchEntry } from "./binary-sketch.js";
import { assertSqlIdentifier, assertValidDimensions, VectorDimensionError } from "./index-errors.js";
import {
  audiencesOf,
  filterMatchesNothing,
  MAX_SEARCH_LIMIT,
  SKILL_PAYLOAD_TYPE,
  type VectorIndex,
  type VectorIndexEntry,
  type VectorSearchFilter,
  type VectorSearchHit,
  type VectorSearchOptions,
} from "./vector-index.js";

export interface SqliteVecIndexOptions {
  /**
   * Name of the `vec0` virtual table; sqlite-vec adds shadow tables prefixed with it.
   * @default "skill_vectors"
   */
  readonly table?: string;
  readonly logger?: Logger;
  /**
   * From this many entries on, searches go through the approximate path (an in-memory binary
   * sketch with an exact re-rank, docs/routing.md#approximate-search) instead of the exact KNN
   * scan; below it the exact scan is as fast. `Infinity` keeps every search exact.
   * @default {@link DEFAULT_APPROXIMATE_FROM}
   */
  readonly approximateFrom?: number;
  /** Tuning of the approximate path. @default candidates 8192 */
  readonly sketch?: BinarySketchOptions;
}

/**
 * Entries from which the embedded index searches approximately (docs/routing.md#approximate-search):
 * measured, the exact sqlite-vec scan and the sketch cost about the same at 5,000 MiniLM vectors,
 * and the exact scan costs ~5x the sketch at 100,000 (84 against 16 ms, docs/performance.md#scale).
 * Below 8,192 matching entries the sketch re-ranks every match and is exact anyway; the threshold
 * spares small libraries its memory (4 bytes per dimension per entry: 15 MB at 10,000 entries of
 * 384 dimensions).
 */
export const DEFAULT_APPROXIMATE_FROM = 5_000;

/**
 * The embedded vector index: a sqlite-vec `vec0` table inside a database the caller owns
 * (normally `registry.db`), so skills and their vectors share one file, one backup and one
 * transaction log.
 *
 * Below {@link DEFAULT_APPROXIMATE_FROM} entries search is exact KNN (a full scan of the vector
 * chunks); from there on it goes through an in-memory binary sketch of the same rows with an exact
 * re-rank ({@link BinarySketch}, docs/routing.md#approximate-search), because the exact scan grows
 * to 85-125 ms at 100,000 entries. The table stays the only copy on disk; the sketch is read from it at
 * `ensure` and follows every write. Status, owner, visibility and audience are vec0 *metadata columns*:
 * sqlite-vec applies `WHERE` on them inside the scan, before choosing the k nearest, so a filtered
 * search returns `limit` hits whenever that many rows match, with no over-fetching (and computes
 * no distance for a row that does not match).
 *
 * A skill routed to several audiences (its owner and its grantees: docs/routing.md#scoping) has
 * one row per audience, because a vec0 metadata column holds one value: the entry's own row (id =
 * the entry id, `main = 1`) carries the first audience, and one more row per further audience
 * (id = entry id, U+001F, audience; `main = 0`), listed in `<table>_audiences`. A filtered search
 * asks for `limit` × (allowlist size) rows, since at most that many rows of one entry can match,
 * and keeps the best row per entry; an unfiltered one reads main rows only. Still one KNN scan.
 *
 * A table from before the `audience` and `main` columns is re-created empty by `ensure` (vec0 has
 * no ALTER TABLE); until then the index reports no dimensions, as if it did not exist.
 */
export class SqliteVecIndex implements VectorIndex {
  readonly kind = "sqlite-vec";
  private readonly table: string;
  private readonly logger: Logger | undefined;
  /** The extra rows of entries with more than one audience: row id → entry id and audience. */
  private readonly audienceTable: string;
  private currentDimensions: number | undefined;
  /** Prepared KNN statements by SQL text; filters change the number of placeholders. */
  private readonly searchStatements = new Map<string, Database.Statement>();
  private readonly approximateFrom: number;
  private readonly sketchOptions: BinarySketchOptions;
  /**
   * The approximate path, once the index holds {@link approximateFrom} entries: derived from the
   * table (never stored apart) and kept in step by every write through this adapter, the only
   * writer of its table while the service runs.
   */
  private sketch: BinarySketch | undefined;
  /** Entries in the table, counted once when first needed and then kept by upsert and remove. */
  private entries: number | undefined;

  /**
   * Loads the sqlite-vec extension into `db` (a no-op when it is already loaded) and picks up an
   * existing table's dimensions, so a restarted service can search before calling `ensure`.
   * The handle stays the caller's: `close()` never closes it.
   */
  constructor(
    private readonly db: Database.Database,
    options: SqliteVecIndexOptions = {},
  ) {
    this.table = options.table ?? "skill_vectors";
    assertSqlIdentifier(this.table, "sqlite-vec table name");
    this.logger = options.logger;
    this.audienceTable = `${this.table}_audiences`;
    this.approximateFrom = options.approximateFrom ?? DEFAULT_APPROXIMATE_FROM;
    this.sketchOptions = options.sketch ?? {};
    loadSqliteVec(db);
    const stored = this.storedSchema();
    this.currentDimensions = stored?.current ? stored.dimensions : undefined;
  }

  /** Whether searches take the approximate path now (docs/routing.md#approximate-search). */
  get approximate(): boolean {
    return this.sketch !== undefined;
  }

  /** The dimensions of the current table, or undefined before the first `ensure`. */
  get dimensions(): number | undefined {
    return this.currentDimensions;
  }

  async ensure(dimensions: number): Promise<void> {
    assertValidDimensions(dimensions);
    const stored = this.storedSchema();
    if (stored && stored.dimensions === dimensions && stored.current) {
      this.createAudienceTable();
      this.currentDimensions = dimensions;
      // At start-up, so the first route does not pay for reading every vector.
      this.prepareSketch();
      return;
    }
    this.logger?.info(
      { table: this.table, from: stored?.dimensions, to: dimensions },
      !stored
        ? "creating the sqlite-vec index"
        : stored.current
          ? "re-creating the sqlite-vec index for new dimensions"
          : "re-creating the sqlite-vec index in the current layout (skills are re-indexed)",
    );
    this.searchStatements.clear();
    this.sketch = undefined;
    this.entries = 0;
    withSqlite("routing index", "create the vector index", () =>
      // One transaction: a crash between DROP and CREATE must not leave the service without a table.
      this.db.transaction(() => {
        // DROP on a vec0 table also drops its shadow tables (chunks, rowids, metadata).
        this.db.exec(`DROP TABLE IF EXISTS ${this.table}`);
        this.db.exec(`DROP TABLE IF EXISTS ${this.audienceTable}`);
        this.db.exec(
          `CREATE VIRTUAL TABLE ${this.table} USING vec0(
             skill_id TEXT PRIMARY KEY,
             embedding float[${dimensions}] distance_metric=cosine,
             status TEXT,
             owner TEXT,
             visibility TEXT,
             audience TEXT,
             main INTEGER
           )`,
        );
        this.createAudienceTable();
      })(),
    );
    this.currentDimensions = dimensions;
  }

  async upsert(entries: readonly VectorIndexEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const dimensions = this.requireDimensions();
    for (const entry of entries) {
      if (entry.vector.length !== dimensions) throw new VectorDimensionError(dimensions, entry.vector.length);
    }
    withSqlite("routing index", "upsert skill vectors", () => {
      // vec0 has no INSERT OR REPLACE; UPDATE keeps the row (and its chunk slot) when it exists.
      const update = this.db.prepare(
        `UPDATE ${this.table} SET embedding = ?, status = ?, owner = ?, visibility = ?, audience = ?, main = ? WHERE skill_id = ?`,
      );
      const insert = this.db.prepare(
        `INSERT INTO ${this.table} (skill_id, embedding, status, owner, visibility, audience, main) VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      const extras = this.db.prepare(`SELECT row_id, audience FROM ${this.audienceTable} WHERE entry_id = ?`);
      const dropRow = this.db.prepare(`DELETE FROM ${this.table} WHERE skill_id = ?`);
      const dropExtra = this.db.prepare(`DELETE FROM ${this.audienceTable} WHERE row_id = ?`);
      const addExtra = this.db.prepare(`INSERT INTO ${this.audienceTable} (row_id, entry_id, audience) VALUES (?, ?, ?)`);
      let inserted = 0;
      const put = (rowId: string, blob: Buffer, payload: VectorIndexEntry["payload"], audience: string, main: number): void => {
        const { status, owner, visibility } = payload;
        const changed = update.run(blob, status, owner, visibility, audience, BigInt(main), rowId).changes;
        if (changed > 0) return;
        insert.run(rowId, blob, status, owner, visibility, audience, BigInt(main));
        if (main === 1) inserted++;
      };
      this.db.transaction(() => {
        for (const { id, vector, payload } of entries) {
          const blob = toBlob(vector);
          const [first, ...more] = audiencesOf(payload);
          put(id, blob, payload, first as string, 1);
          const previous = new Set((extras.all(id) as Array<{ row_id: string }>).map((row) => row.row_id));
          for (const audience of more) {
            const rowId = extraRowId(id, audience);
            put(rowId, blob, payload, audience, 0);
            if (!previous.delete(rowId)) addExtra.run(rowId, id, audience);
          }
          for (const stale of previous) {
            dropRow.run(stale);
            dropExtra.run(stale);
          }
        }
      })();
      if (this.entries !== undefined) this.entries += inserted;
    });
    // After the commit: a failed transaction leaves the sketch as the table is.
    if (this.sketch) this.sketch.upsert(entries);
    else this.prepareSketch();
    this.logger?.debug({ table: this.table, count: entries.length }, "upserted skill vectors");
  }

  async remove(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    this.requireDimensions();
    withSqlite("routing index", "remove skill vectors", () => {
      const remove = this.db.prepare(`DELETE FROM ${this.table} WHERE skill_id = ?`);
      const extras = this.db.prepare(`SELECT row_id FROM ${this.audienceTable} WHERE entry_id = ?`);
      const forget = this.db.prepare(`DELETE FROM ${this.audienceTable} WHERE entry_id = ?`);
      let removed = 0;
      this.db.transaction(() => {
        for (const id of ids) {
          removed += remove.run(id).changes;
          for (const { row_id } of extras.all(id) as Array<{ row_id: string }>) remove.run(row_id);
          forget.run(id);
        }
      })();
      if (this.entries !== undefined) this.entries -= removed;
    });
    this.sketch?.remove(ids);
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorSearchHit[]> {
    const dimensions = this.requireDimensions();
    if (vector.length !== dimensions) throw new VectorDimensionError(dimensions, vector.length);
    const limit = Math.min(Math.floor(options.limit), MAX_SEARCH_LIMIT);
    // `!(limit > 0)` so that NaN also means "no hits" instead of reaching SQL or the wire.
    if (!(limit > 0) || filterMatchesNothing(options.filter)) return [];
    if (this.sketch) return this.sketch.search(vector, limit, options.filter);
    const { sql, params } = this.knnQuery(options.filter);
    // At most one row per listed audience can match for one entry: ask for enough rows that
    // `limit` distinct entries come back whenever that many match.
    const rowsWanted = Math.min(limit * Math.max(1, options.filter?.audiences?.length ?? 1), MAX_SEARCH_LIMIT);
    const rows = withSqlite("routing index", "search skill vectors", () => {
      let statement = this.searchStatements.get(sql);
      if (!statement) {
        statement = this.db.prepare(sql);
        this.searchStatements.set(sql, statement);
      }
      return statement.all(toBlob(vector), rowsWanted, ...params) as Array<{ id: string; distance: number }>;
    });
    // sqlite-vec's cosine distance is 1 - cos(θ); the port promises the similarity itself.
    const hits: VectorSearchHit[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      const id = entryIdOf(row.id);
      if (seen.has(id)) continue;
      seen.add(id);
      hits.push({ id, score: 1 - row.distance });
      if (hits.length === limit) break;
    }
    return hits;
  }

  async count(): Promise<number> {
    this.requireDimensions();
    return withSqlite("routing index", "count skill vectors", () => {
      const row = this.db.prepare(`SELECT count(*) AS n FROM ${this.table}`).get() as { n: number };
      const extra = this.db.prepare(`SELECT count(*) AS n FROM ${this.audienceTable}`).get() as { n: number };
      return row.n - extra.n;
    });
  }

  async ids(): Promise<string[]> {
    this.requireDimensions();
    return withSqlite("routing index", "list skill vector ids", () =>
      (this.db.prepare(`SELECT skill_id AS id FROM ${this.table} ORDER BY skill_id`).all() as Array<{ id: string }>)
        .map((row) => row.id)
        .filter((id) => !id.includes(EXTRA_ROW_SEPARATOR)),
    );
  }

  async *scan(batchSize: number): AsyncIterable<VectorIndexEntry[]> {
    this.requireDimensions();
    let after = "";
    for (;;) {
      // Keyset pages, one statement each: an iterator held open across a yield would keep the
      // connection busy and fail every write made meanwhile.
      const rows = withSqlite("routing index", "read skill vectors", () =>
        this.db
          .prepare(
            `SELECT skill_id AS id, embedding, status, owner, visibility FROM ${this.table} WHERE skill_id > ? ORDER BY skill_id LIMIT ?`,
          )
          .all(after, Math.max(1, Math.floor(batchSize))),
      ) as Array<{ id: string; embedding: Buffer; status: string; owner: string; visibility: string }>;
      if (rows.length === 0) return;
      const extras = this.db.prepare(`SELECT audience FROM ${this.audienceTable} WHERE entry_id = ? ORDER BY row_id`);
      yield rows
        .filter((row) => !row.id.includes(EXTRA_ROW_SEPARATOR))
        .map((row) => {
          const grantAudiences = (extras.all(row.id) as Array<{ audience: string }>).map((extra) => extra.audience);
          return {
            id: row.id,
            vector: new Float32Array(
              row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength),
            ),
            payload: {
              type: SKILL_PAYLOAD_TYPE,
              name: row.id,
              owner: row.owner,
              visibility: row.visibility === "public" ? "public" : row.visibility === "internal" ? "internal" : "private",
              status: row.status,
              ...(grantAudiences.length > 0 ? { grantAudiences } : {}),
            },
          };
        });
      after = (rows.at(-1) as { id: string }).id;
    }
  }

  async close(): Promise<void> {
    // The database belongs to the caller; only drop our cached statements and the sketch.
    this.searchStatements.clear();
    this.sketch = undefined;
  }

  /** Builds the approximate path once the table holds {@link approximateFrom} entries. */
  private prepareSketch(): void {
    if (this.sketch || this.currentDimensions === undefined || !Number.isFinite(this.approximateFrom)) return;
    this.entries ??= this.countEntries();
    if (this.entries < this.approximateFrom) return;
    const started = performance.now();
    const sketch = new BinarySketch(this.currentDimensions, this.sketchOptions);
    sketch.load(this.readAll());
    this.sketch = sketch;
    this.logger?.info(
      { table: this.table, entries: sketch.count, ms: Math.round(performance.now() - started) },
      "vector index searches approximately from now on (docs/routing.md#approximate-search)",
    );
  }

  /** Every entry with its audiences, in one pass over the table (keyset pages would rescan vec0 for each page). */
  private readAll(): SketchEntry[] {
    return withSqlite("routing index", "read every skill vector", () => {
      const byId = new Map<
        string,
        { id: string; vector: Float32Array; status: string; owner: string; visibility: string; audiences: string[] }
      >();
      const extras: Array<{ id: string; audience: string }> = [];
      const rows = this.db
        .prepare(`SELECT skill_id AS id, embedding, status, owner, visibility, audience, main FROM ${this.table}`)
        .iterate() as IterableIterator<{
        id: string;
        embedding: Buffer;
        status: string;
        owner: string;
        visibility: string;
        audience: string;
        main: number;
      }>;
      for (const row of rows) {
        if (row.main !== 1) {
          extras.push({ id: entryIdOf(row.id), audience: row.audience });
          continue;
        }
        const vector = new Float32Array(
          row.embedding.buffer.slice(row.embedding.byteOffset, row.embedding.byteOffset + row.embedding.byteLength),
        );
        byId.set(row.id, {
          id: row.id,
          vector,
          status: row.status,
          owner: row.owner,
          visibility: row.visibility,
          audiences: [row.audience],
        });
      }
      for (const extra of extras) byId.get(extra.id)?.audiences.push(extra.audience);
      return [...byId.values()];
    });
  }

  private countEntries(): number {
    return withSqlite("routing index", "count skill vectors", () => {
      const row = this.db.prepare(`SELECT count(*) AS n FROM ${this.table} WHERE main = 1`).get() as { n: number };
      return row.n;
    });
  }

  private knnQuery(filter: VectorSearchFilter | undefined): { sql: string; params: string[] } {
    const clauses: string[] = [];
    const params: string[] = [];
    const allow = (column: string, values: readonly string[] | undefined): void => {
      if (values === undefined) return;
      // Plain AND-ed `IN (?, …)` is what vec0 pushes into the scan; an OR or a subquery would be
      // applied after the k nearest were chosen and silently return fewer hits.
      clauses.push(`AND ${column} IN (${values.map(() => "?").join(", ")})`);
      params.push(...values);
    };
    allow("status", filter?.statuses);
    allow("owner", filter?.owners);
    allow("visibility", filter?.visibility);
    allow("audience", filter?.audiences);
    // Unfiltered by audience (an admin's route): one row per entry, its main one.
    if (filter?.audiences === undefined) clauses.push("AND main = 1");
    const sql = `SELECT skill_id AS id, distance FROM ${this.table}
                  WHERE embedding MATCH ? AND k = ? ${clauses.join(" ")}
                  ORDER BY distance`;
    return { sql, params };
  }

  /**
   * The existing table's dimensions, and whether it is `current`: cosine distance and every
   * metadata column this adapter filters on (a table from before `audience` is not).
   */
  private storedSchema(): { dimensions: number; current: boolean } | undefined {
    const row = withSqlite("routing index", "read the vector index schema", () =>
      this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").get(this.table),
    ) as { sql: string | null } | undefined;
    const match = row?.sql ? /embedding\s+float\[(\d+)\]/i.exec(row.sql) : null;
    if (!row?.sql || !match?.[1]) return undefined;
    const cosine = /distance_metric\s*=\s*cosine/i.test(row.sql);
    const columns =
      ["status", "owner", "visibility", "audience"].every((column) =>
        new RegExp(`[(,]\\s*${column}\\s+text\\b`, "i").test(row.sql as string),
      ) && /[(,]\s*main\s+integer\b/i.test(row.sql);
    return { dimensions: Number(match[1]), current: cosine && columns };
  }

  private createAudienceTable(): void {
    this.db.exec(
      `CREATE TABLE IF NOT EXISTS ${this.audienceTable} (row_id TEXT PRIMARY KEY, entry_id TEXT NOT NULL, audience TEXT NOT NULL) STRICT;
       CREATE INDEX IF NOT EXISTS ${this.audienceTable}_by_entry ON ${this.audienceTable} (entry_id)`,
    );
  }

  private requireDimensions(): number {
    if (this.currentDimensions === undefined) {
      throw new FailedPreconditionError(`the vector index "${this.table}" does not exist yet; call ensure(dimensions) first`);
    }
    return this.currentDimensions;
  }
}

/**
 * Loads sqlite-vec once per connection. The extension ships as a prebuilt `vec0` library inside
 * a per-platform npm package (`sqlite-vec-linux-x64` …), so nothing is compiled or downloaded.
 */
function loadSqliteVec(db: Database.Database): void {
  try {
    db.prepare("SELECT vec_version()").get();
    return;
  } catch {
    // Not loaded on this connection yet.
  }
  try {
    sqliteVec.load(db);
  } catch (error) {
    throw new FailedPreconditionError(
      `cannot load the sqlite-vec extension (${errorMessage(error)}); ` + "is the platform package for this OS and CPU installed?",
      { cause: error },
    );
  }
}

/** Separates an entry id from the audience in the id of its extra rows; never part of a skill name or evidence hash. */
const EXTRA_ROW_SEPARATOR = "\u001f";

function extraRowId(entryId: string, audience: string): string {
  return `${entryId}${EXTRA_ROW_SEPARATOR}${audience}`;
}

function entryIdOf(rowId: string): string {
  const at = rowId.indexOf(EXTRA_ROW_SEPARATOR);
  return at < 0 ? rowId : rowId.slice(0, at);
}

/** sqlite-vec reads float32 vectors as raw little-endian blobs; this shares the memory, no copy. */
function toBlob(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}
