import type { Logger } from "pino";
import { errorMessage } from "../errors/index.js";
import { type UnavailableReason, VectorIndexUnavailableError } from "./index-errors.js";
import type { VectorIndex, VectorIndexEntry, VectorSearchHit, VectorSearchOptions } from "./vector-index.js";

/** How long `close()` waits for a re-sync in progress. */
const CLOSE_WAIT_MS = 2_000;

/** Why a primary is out of step before its first check. */
const NOT_CHECKED = "not checked since start-up";

export interface FallbackVectorIndexOptions {
  readonly logger: Logger;
  /**
   * Called with the reason each time the primary stops serving (for a metric); an `unauthorized`
   * or `forbidden` reason is also logged at error level, since only an operator can fix it.
   */
  readonly onUnavailable?: (reason: UnavailableReason) => void;
  /** First wait before retrying a failed re-sync; doubles up to {@link maxBackoffMs}. @default 1000 */
  readonly initialBackoffMs?: number;
  /** @default 60000 */
  readonly maxBackoffMs?: number;
  /** Entries read from the embedded index per batch of a re-sync. @default 500 */
  readonly syncBatch?: number;
}

/**
 * Qdrant for scale, with the embedded index always kept alongside (docs/routing.md#qdrant): every
 * write goes to the embedded index, and to the primary while it is in step; reads go to the
 * primary while it is in step and to the embedded index otherwise, saying so in `lastFallback`.
 *
 * The primary is judged on its own: at `ensure` its entry count is compared with the embedded
 * index's, so an empty Qdrant (a new deployment, a lost volume, a collection just created) is out
 * of step from the start. An out-of-step primary is brought in step by a re-sync in the background
 * — once at a time, retried with exponential back-off while it fails — that copies the embedded
 * index's entries and deletes what the embedded index no longer holds (removals made while
 * Qdrant was away are replayed). Nothing is re-embedded and the keyword index is never touched.
 */
export class FallbackVectorIndex implements VectorIndex {
  readonly kind: string;
  /** Why the last search used the embedded index; empty when the primary answered. */
  lastFallback = "";
  private readonly logger: Logger;
  private readonly onUnavailable: ((reason: UnavailableReason) => void) | undefined;
  private readonly initialBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly syncBatch: number;
  private dimensions: number | undefined;
  /** Why the primary is out of step; undefined while it is in step. */
  private outOfStep: string | undefined = "not checked yet";
  /** The primary's collection must be (re)created before it is filled. */
  private needsEnsure = true;
  private syncing: Promise<void> | undefined;
  /** A write happened while a re-sync was running: it may have missed it, so it runs again. */
  private writtenDuringSync = false;
  private backoffMs: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly primary: VectorIndex,
    private readonly embedded: VectorIndex,
    options: FallbackVectorIndexOptions,
  ) {
    this.kind = `${primary.kind}+${embedded.kind}`;
    this.logger = options.logger;
    this.onUnavailable = options.onUnavailable;
    this.initialBackoffMs = options.initialBackoffMs ?? 1_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 60_000;
    this.syncBatch = options.syncBatch ?? 500;
    this.backoffMs = this.initialBackoffMs;
  }

  /** True while the primary serves searches. */
  get inStep(): boolean {
    return this.outOfStep === undefined;
  }

  async ensure(dimensions: number): Promise<void> {
    await this.embedded.ensure(dimensions);
    this.dimensions = dimensions;
    this.needsEnsure = true;
    this.markOutOfStep(NOT_CHECKED);
    // In the background: a large copy must not hold up the start, and routing uses the embedded
    // index until the primary is in step (`settled()` waits for it).
    this.startSync();
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
    if (this.inStep) {
      try {
        const hits = await this.primary.search(vector, options);
        this.lastFallback = "";
        return hits;
      } catch (error) {
        if (!(error instanceof VectorIndexUnavailableError)) throw error;
        this.primaryFailed(error);
      }
    }
    this.lastFallback = `${this.primary.kind} ${this.outOfStep ?? "out of step"}; used the embedded index`;
    return this.embedded.search(vector, options);
  }

  count(): Promise<number> {
    return this.embedded.count();
  }

  ids(): Promise<string[]> {
    return this.embedded.ids();
  }

  scan(batchSize: number): AsyncIterable<VectorIndexEntry[]> {
    return this.embedded.scan(batchSize);
  }

  /** Resolves when no re-sync is running (tests, and shutdown). */
  async settled(): Promise<void> {
    while (this.syncing) await this.syncing;
  }

  /**
   * Stops re-syncing: no new attempt starts, a copy in progress stops at its next batch. Waits for
   * it at most {@link CLOSE_WAIT_MS}, so a Qdrant that hangs never holds up a shutdown; what it did
   * not copy is copied at the next start (the counts differ).
   */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const syncing = this.syncing;
    if (syncing) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([syncing, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_WAIT_MS)))]);
      clearTimeout(timer);
    }
    await Promise.allSettled([this.primary.close(), this.embedded.close()]);
  }

  private async onPrimary(work: () => Promise<void>): Promise<void> {
    if (this.syncing) this.writtenDuringSync = true;
    if (!this.inStep) return;
    try {
      await work();
    } catch (error) {
      if (!(error instanceof VectorIndexUnavailableError)) throw error;
      this.primaryFailed(error);
    }
  }

  private primaryFailed(error: VectorIndexUnavailableError): void {
    if (error.reason === "missing") this.needsEnsure = true;
    this.markOutOfStep(describe(error), error);
    this.onUnavailable?.(error.reason);
    this.startSync();
  }

  private markOutOfStep(reason: string, error?: VectorIndexUnavailableError): void {
    const wasInStep = this.inStep;
    this.outOfStep = reason;
    if (!wasInStep || error === undefined) return;
    const line = `${this.primary.kind} cannot serve (${error.message}); routing uses the embedded index until it is back in step`;
    if (error.reason === "unauthorized" || error.reason === "forbidden" || error.reason === "incompatible") {
      this.logger.error({ reason: error.reason }, line);
    } else this.logger.warn({ reason: error.reason }, line);
  }

  /** Starts a re-sync unless one runs or a back-off is pending. */
  private startSync(): void {
    if (this.syncing || this.retryTimer || this.closed || this.dimensions === undefined) return;
    this.syncing = this.sync().finally(() => {
      this.syncing = undefined;
    });
  }

  private async sync(): Promise<void> {
    const dimensions = this.dimensions as number;
    try {
      if (this.needsEnsure) {
        await this.primary.ensure(dimensions);
        this.needsEnsure = false;
      }
      const afterStart = this.outOfStep === NOT_CHECKED;
      this.writtenDuringSync = false;
      // In step already (the common restart: same counts, nothing written meanwhile): nothing to copy.
      const sameCount = (await this.primary.count()) === (await this.embedded.count());
      if (!afterStart || !sameCount || this.writtenDuringSync) await this.copyAll();
      if (this.closed) return;
      this.outOfStep = undefined;
      this.backoffMs = this.initialBackoffMs;
      this.logger.info({ entries: await this.embedded.count() }, `${this.primary.kind} is in step with the embedded index`);
    } catch (error) {
      if (this.closed) return;
      if (!(error instanceof VectorIndexUnavailableError)) {
        this.logger.error({ err: error }, `re-syncing ${this.primary.kind} failed: ${errorMessage(error)}`);
      } else {
        if (error.reason === "missing") this.needsEnsure = true;
        const first = this.outOfStep === NOT_CHECKED;
        this.outOfStep = describe(error);
        if (first) {
          this.onUnavailable?.(error.reason);
          const line = `${this.primary.kind} cannot serve (${error.message}); routing uses the embedded index and retries in the background`;
          if (error.reason === "unauthorized" || error.reason === "forbidden" || error.reason === "incompatible") {
            this.logger.error({ reason: error.reason }, line);
          } else this.logger.warn({ reason: error.reason }, line);
        }
      }
      this.scheduleRetry();
    }
  }

  /**
   * Copies every embedded entry to the primary and deletes the primary's entries the embedded
   * index lacks; runs again while writes happened meanwhile (at most three rounds, then the
   * counts decide).
   */
  private async copyAll(): Promise<void> {
    for (let round = 0; round < 3; round++) {
      this.writtenDuringSync = false;
      const keep = new Set(await this.embedded.ids());
      const gone = (await this.primary.ids()).filter((id) => !keep.has(id));
      await this.primary.remove(gone);
      let copied = 0;
      for await (const batch of this.embedded.scan(this.syncBatch)) {
        if (this.closed) return;
        await this.primary.upsert(batch);
        copied += batch.length;
      }
      this.logger.info({ copied, removed: gone.length, round }, `copied the embedded index to ${this.primary.kind}`);
      if (!this.writtenDuringSync) return;
    }
    if ((await this.primary.count()) !== (await this.embedded.count())) {
      throw new VectorIndexUnavailableError(this.primary.kind, "still out of step after three rounds of copying while writes went on", {
        reason: "overloaded",
      });
    }
  }

  private scheduleRetry(): void {
    if (this.closed) return;
    const wait = this.backoffMs;
    this.backoffMs = Math.min(this.maxBackoffMs, this.backoffMs * 2);
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.startSync();
    }, wait);
    // A pending retry must not keep the process alive.
    this.retryTimer.unref();
  }
}

function describe(error: VectorIndexUnavailableError): string {
  switch (error.reason) {
    case "unauthorized":
      return "refused the API key (check QDRANT_API_KEY)";
    case "forbidden":
      return "forbade the write (read-only key or locked storage)";
    case "missing":
      return "lost its collection (re-creating and refilling it)";
    case "incompatible":
      return "has a collection of that name with other vector parameters (left untouched)";
    case "timeout":
      return "timed out";
    case "overloaded":
      return "is overloaded";
    case "rejected":
      return "rejected a request";
    case "unreachable":
      return "unreachable";
  }
}
