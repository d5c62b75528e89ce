import { createHash } from "node:crypto";
import { EmbedderError, type Embedder } from "./embedder.js";

/**
 * Port: where embeddings are kept between runs, keyed by model id and text hash. Synchronous,
 * because its default lives in the service's SQLite file and better-sqlite3 is synchronous.
 */
export interface EmbeddingStore {
  /** The stored vectors of `modelId` for those of `hashes` it has; a hash with no entry is a miss. */
  get(modelId: string, hashes: readonly string[]): Map<string, Float32Array>;
  /** Stores `entries` (text hash → vector) under `modelId`, replacing what was there. */
  put(modelId: string, entries: ReadonlyMap<string, Float32Array>): void;
}

/** The cache key of a text: sha256 of its exact UTF-8 bytes, lowercase hex (no trimming, no case folding). */
export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * An {@link Embedder} that asks its inner embedder only for texts it has not seen before.
 *
 * Entries are keyed by the inner embedder's model id, and a stored vector whose length is not the
 * inner embedder's dimensions counts as a miss: switching models or dimensions re-embeds instead of
 * returning stale vectors. All misses of one call (each distinct text once) go to the inner
 * embedder in a single `embed` call, which does its own batching.
 */
export class CachedEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;

  constructor(
    private readonly inner: Embedder,
    private readonly store: EmbeddingStore,
  ) {
    this.modelId = inner.modelId;
    this.dimensions = inner.dimensions;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const hashes = texts.map(textHash);
    const found = this.store.get(this.modelId, [...new Set(hashes)]);
    for (const [hash, vector] of found) if (vector.length !== this.dimensions) found.delete(hash);

    const missing = new Map<string, string>();
    texts.forEach((text, i) => {
      const hash = hashes[i] as string;
      if (!found.has(hash)) missing.set(hash, text);
    });
    if (missing.size > 0) {
      const fresh = await this.inner.embed([...missing.values()]);
      if (fresh.length !== missing.size) {
        throw new EmbedderError(this.modelId, `the embedder returned ${fresh.length} vectors for ${missing.size} texts`);
      }
      const entries = new Map<string, Float32Array>();
      [...missing.keys()].forEach((hash, i) => entries.set(hash, fresh[i] as Float32Array));
      this.store.put(this.modelId, entries);
      for (const [hash, vector] of entries) found.set(hash, vector);
    }
    return hashes.map((hash) => found.get(hash) as Float32Array);
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }
}
