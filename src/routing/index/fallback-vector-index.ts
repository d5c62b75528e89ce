import type { Logger } from "pino";
import { VectorIndexUnavailableError } from "./index-errors.js";
import type { VectorIndex, VectorIndexEntry, VectorSearchHit, VectorSearchOptions } from "./vector-index.js";

/**
 * Qdrant for scale, with the embedded index always kept alongside: every write goes to both;
 * reads go to the primary and fall back to the embedded one when the primary is unreachable
 * (the caller is told through `lastFallback`). Writes the primary missed mark it stale; when it
 * answers again, it is brought up to date from the embedded index's entries via `resync`.
 */
export class FallbackVectorIndex implements VectorIndex {
  readonly kind: string;
  private stale = false;
  /** Why the last search used the embedded index; empty when the primary answered. */
  lastFallback = "";

  constructor(
    private readonly primary: VectorIndex,
    private readonly embedded: VectorIndex,
    private readonly resync: () => Promise<void>,
    private readonly logger: Logger,
  ) {
    this.kind = `${primary.kind}+${embedded.kind}`;
  }

  async ensure(dimensions: number): Promise<void> {
    await this.embedded.ensure(dimensions);
    await this.onPrimary(() => this.primary.ensure(dimensions));
  }

  async upsert(entries: readonly VectorIndexEntry[]): Promise<void> {
    await this.embedded.upsert(entries);
    await this.onPrimary(() => this.primary.upsert(entries));
  }

  async remove(ids: readonly string[]): Promise<void> {
    await this.embedded.remove(ids);
    await this.onPrimary(() => this.primary.remove(ids));
  }

  async search(vector: Float32Array, options: VectorSearchOptions): Promise<VectorSearchHit[]> {
    if (this.stale) await this.tryResync();
    if (!this.stale) {
      try {
        const hits = await this.primary.search(vector, options);
        this.lastFallback = "";
        return hits;
      } catch (error) {
        if (!(error instanceof VectorIndexUnavailableError)) throw error;
        this.markStale(error);
      }
    }
    this.lastFallback = `${this.primary.kind} unreachable; used the embedded index`;
    return this.embedded.search(vector, options);
  }

  count(): Promise<number> {
    return this.embedded.count();
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.primary.close(), this.embedded.close()]);
  }

  private async onPrimary(work: () => Promise<void>): Promise<void> {
    if (this.stale) return;
    try {
      await work();
    } catch (error) {
      if (!(error instanceof VectorIndexUnavailableError)) throw error;
      this.markStale(error);
    }
  }

  private markStale(error: Error): void {
    if (!this.stale) this.logger.warn({ err: error }, `${this.primary.kind} unreachable; routing uses the embedded index until it is back`);
    this.stale = true;
  }

  private async tryResync(): Promise<void> {
    try {
      this.stale = false;
      await this.resync();
      // The resync's own writes mark the primary stale again if it is still unreachable.
      if (!this.stale) this.logger.info(`${this.primary.kind} is back and up to date`);
    } catch (error) {
      this.stale = true;
      if (!(error instanceof VectorIndexUnavailableError)) throw error;
    }
  }
}
