import type { Logger } from "pino";
import { afterReply } from "../../reply-scope/index.js";
import type { SkillRegistry } from "../registry/index.js";
import type { CanonicalStore } from "./canonical-store.js";
import { type MirrorEntry, toMirrorEntry } from "./mirror-format.js";

/**
 * Keeps `skills_registry.json` in step with the registry. Changes of code or status flush at
 * once; the counter updates of every invocation are coalesced, so the hot path pays no fsync.
 */
export class MirrorWriter {
  private pending: NodeJS.Timeout | undefined;
  /** A rewrite asked for after the current reply and not yet started. */
  private due = false;
  private writing: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    private readonly logger: Logger,
    private readonly coalesceMs = 1_000,
    private readonly retryMs = 5_000,
  ) {}

  /** Rewrites the mirror now (after any write already in progress). */
  async flush(): Promise<void> {
    this.due = false;
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    const next = this.writing.then(() => this.store.writeMirror(this.entries()));
    this.writing = next.catch((error: unknown) => {
      this.logger.error({ err: error }, "could not rewrite skills_registry.json");
    });
    await next;
  }

  /**
   * Rewrites the mirror now, and never fails the change that asked for it: the change is
   * committed in the registry and the files already. When the write fails (a full or read-only
   * disk), it is logged and tried again every `retryMs` until it succeeds, so the mirror agrees
   * with the registry again once the disk does (docs/operations.md#full-disks-and-a-locked-registry).
   */
  async flushOrLater(): Promise<void> {
    try {
      await this.flush();
    } catch {
      this.retryLater();
    }
  }

  /**
   * Rewrites the mirror once the reply of the call that changed the registry has gone out
   * (src/reply-scope), so that reading and serialising every skill is not on that caller's wait
   * (docs/performance.md#the-mirror-after-the-reply). `close()` writes it if it is still due.
   */
  flushAfterReply(): void {
    if (this.due) return;
    this.due = true;
    afterReply(() => {
      if (!this.due) return;
      void this.flushOrLater();
    });
  }

  /** Rewrites the mirror soon; many calls within the window cost one write. */
  schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.flushOrLater();
    }, this.coalesceMs);
    this.pending.unref();
  }

  private retryLater(): void {
    if (this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.flushOrLater();
    }, this.retryMs);
    this.retry.unref();
  }

  async close(): Promise<void> {
    if (this.retry) clearTimeout(this.retry);
    if (this.pending || this.due) await this.flush().catch(() => undefined);
    await this.writing;
  }

  /**
   * The registry's skills as mirror entries, each read when the file's writer asks for it: the
   * mirror holds every version of every skill, and building it whole before writing made each
   * rewrite (one a second under invocations) hold the whole history in V8's heap across the
   * write's fsync (docs/performance.md#memory-over-time).
   */
  private *entries(): Generator<MirrorEntry> {
    for (const record of this.registry.list({ includeInactive: true })) {
      yield toMirrorEntry(record, this.registry.versions(record.name));
    }
  }
}
