import type { Logger } from "pino";

/** What the pool needs of a started, waiting container. */
export interface PoolMember {
  readonly runId: string;
  /** Settles when the container stops (it should not while idle: engine restart, crash). */
  readonly exited: Promise<unknown>;
}

export interface WarmPoolOptions<T extends PoolMember> {
  /** Containers kept started and waiting. */
  readonly size: number;
  /** An idle container older than this is replaced, so none lives for long. */
  readonly idleMs: number;
  readonly create: () => Promise<T>;
  /** Removes a container that will never run a job. */
  readonly discard: (member: T) => Promise<void>;
  /**
   * True while the host is saturated with runs: no refill starts then (it would compete with the
   * runs for the engine); the owner calls {@link WarmPool.resume} when that may have changed.
   */
  readonly paused?: () => boolean;
  readonly logger: Logger;
}

const MAX_BACKOFF_MS = 30_000;

/**
 * After a take, the refill starts when the owner resumes the pool (its runner does once the run's
 * caller has its answer: docs/performance.md#after-the-reply) or after this long, whichever comes
 * first, so that a long run does not leave the pool short meanwhile.
 */
export const REFILL_AFTER_TAKE_MS = 250;

/**
 * Containers created and started ahead of time, each waiting for exactly one job. A taker owns
 * the container from then on (and destroys it after its run): nothing is ever handed out twice.
 * The pool refills in the background; when it is empty, callers fall back to a cold start.
 */
export class WarmPool<T extends PoolMember> {
  private readonly idle = new Map<string, { member: T; expiry: NodeJS.Timeout }>();
  private readonly creating = new Set<Promise<unknown>>();
  private readonly discarding = new Set<Promise<unknown>>();
  private closed = false;
  private backoffMs = 0;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly options: WarmPoolOptions<T>) {}

  get idleCount(): number {
    return this.idle.size;
  }

  /** Starts filling. */
  start(): void {
    this.fill();
  }

  /** An idle container, now owned by the caller; undefined when none is ready. */
  take(): T | undefined {
    const next = this.idle.entries().next();
    if (next.done) return undefined;
    const [runId, { member, expiry }] = next.value;
    clearTimeout(expiry);
    this.idle.delete(runId);
    setTimeout(() => this.fill(), REFILL_AFTER_TAKE_MS).unref();
    return member;
  }

  /**
   * Replaces every idle container (discarded, refilled): for containers that can no longer be
   * trusted, such as those made before or while the engine went away, whose streams may belong to
   * an engine process that is gone without having told them (docs/security.md#warm-containers).
   */
  replaceIdle(why: string): void {
    for (const runId of [...this.idle.keys()]) this.evict(runId, why);
  }

  /** Refills if the pool is short and no longer paused; cheap, call it whenever load drops. */
  resume(): void {
    this.fill();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    for (const { member, expiry } of this.idle.values()) {
      clearTimeout(expiry);
      this.discard(member);
    }
    this.idle.clear();
    // Containers still being created are discarded as they arrive (adopt sees `closed`).
    await Promise.allSettled([...this.creating]);
    await Promise.allSettled([...this.discarding]);
  }

  private fill(): void {
    if (this.closed || this.retry || this.options.paused?.()) return;
    // One creation at a time: container start-up is CPU-heavy for the engine, and a burst of
    // them on a small machine slows the runs the pool exists to speed up.
    if (this.idle.size + this.creating.size < this.options.size && this.creating.size === 0) {
      const creation = this.options
        .create()
        .then(
          (member) => {
            this.backoffMs = 0;
            this.adopt(member);
          },
          (error: unknown) => {
            // An engine that is down answers fast; back off instead of spinning.
            this.backoffMs = Math.min(MAX_BACKOFF_MS, Math.max(500, this.backoffMs * 2));
            this.options.logger.warn({ err: error, retryInMs: this.backoffMs }, "could not prepare a warm container");
            this.retry = setTimeout(() => {
              this.retry = undefined;
              this.fill();
            }, this.backoffMs);
            this.retry.unref();
          },
        )
        .finally(() => {
          this.creating.delete(creation);
          this.fill();
        });
      this.creating.add(creation);
    }
  }

  private discard(member: T): void {
    const removal = this.options.discard(member).catch(() => undefined);
    this.discarding.add(removal);
    void removal.finally(() => this.discarding.delete(removal));
  }

  private adopt(member: T): void {
    if (this.closed) {
      this.discard(member);
      return;
    }
    const expiry = setTimeout(() => this.evict(member.runId, "idle lifetime reached"), this.options.idleMs);
    expiry.unref();
    this.idle.set(member.runId, { member, expiry });
    member.exited.then(
      () => this.evict(member.runId, "stopped while idle"),
      () => this.evict(member.runId, "lost while idle"),
    );
  }

  private evict(runId: string, why: string): void {
    const entry = this.idle.get(runId);
    if (!entry) return;
    clearTimeout(entry.expiry);
    this.idle.delete(runId);
    this.options.logger.debug({ runId, why }, "replacing a warm container");
    this.discard(entry.member);
    this.fill();
  }
}
