import type Database from "better-sqlite3";
import type { EmbeddingStore } from "./embedding-cache.js";

interface CacheRow {
  text_hash: string;
  dimensions: number;
  vector: Buffer;
}

/**
 * {@link EmbeddingStore} in a SQLite table, so the cache can live inside the service's
 * `registry.db` and survive restarts. Vectors are stored as raw float32 bytes in the machine's
 * byte order (little-endian on every platform the service runs on): 2 KiB for 512 dimensions.
 */
export class SqliteEmbeddingStore implements EmbeddingStore {
  private readonly select: Database.Statement<[string, string], CacheRow>;
  private readonly upsert: Database.Statement<[string, string, number, Buffer, number]>;
  private readonly deleteOthers: Database.Statement<[string]>;
  private readonly putAll: (modelId: string, entries: ReadonlyMap<string, Float32Array>) => void;

  /**
   * Reads and writes `embedding_cache` (created by registry.db's migrations); the caller owns and closes `db`.
   * @param now the clock for `created_at` (milliseconds since the epoch)
   */
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number = Date.now,
  ) {
    // json_each takes the whole hash list as one parameter: no chunking around SQLite's limit on
    // bound variables, however many skills a rebuild embeds.
    this.select = db.prepare(
      `SELECT text_hash, dimensions, vector FROM embedding_cache
       WHERE model_id = ? AND text_hash IN (SELECT value FROM json_each(?))`,
    );
    this.upsert = db.prepare(
      `INSERT OR REPLACE INTO embedding_cache (model_id, text_hash, dimensions, vector, created_at)
       VALUES (?, ?, ?, ?, ?)`,
    );
    this.deleteOthers = db.prepare("DELETE FROM embedding_cache WHERE model_id <> ?");
    this.putAll = this.db.transaction((modelId: string, entries: ReadonlyMap<string, Float32Array>) => {
      const createdAt = this.now();
      for (const [hash, vector] of entries) {
        this.upsert.run(modelId, hash, vector.length, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), createdAt);
      }
    });
  }

  get(modelId: string, hashes: readonly string[]): Map<string, Float32Array> {
    const found = new Map<string, Float32Array>();
    if (hashes.length === 0) return found;
    for (const row of this.select.iterate(modelId, JSON.stringify(hashes))) {
      // A row whose blob disagrees with its recorded size is damaged: a miss, re-embedded and replaced.
      if (row.vector.byteLength !== row.dimensions * Float32Array.BYTES_PER_ELEMENT) continue;
      found.set(row.text_hash, toFloat32Array(row.vector));
    }
    return found;
  }

  put(modelId: string, entries: ReadonlyMap<string, Float32Array>): void {
    if (entries.size > 0) this.putAll(modelId, entries);
  }

  /**
   * Deletes the vectors of every model but `modelId`: after a switch of embedder they can never be
   * returned again, only take space. Returns the number of vectors deleted.
   */
  retainOnly(modelId: string): number {
    return this.deleteOthers.run(modelId).changes;
  }
}

/** Copies, because a Float32Array view needs a 4-byte-aligned offset that a Buffer need not have. */
function toFloat32Array(bytes: Buffer): Float32Array {
  const vector = new Float32Array(bytes.byteLength / Float32Array.BYTES_PER_ELEMENT);
  new Uint8Array(vector.buffer).set(bytes);
  return vector;
}
