import type { Logger } from "pino";
import { afterReply } from "../../reply-scope/index.js";
import type { MirrorChange, SkillRegistry } from "../registry/index.js";
import type { CanonicalStore } from "./canonical-store.js";
import { toMirrorEntry } from "./mirror-format.js";

/** Marks read and written per round: the files of one round are written concurrently and fsynced together. */
const ROUND = 256;
/** Files in flight at once within a round (their fsyncs overlap in the thread pool). */
const CONCURRENT_WRITES = 8;

/**
 * Keeps the registry's mirror (`.registry/<name>.json`, one file per skill) in step with the
 * registry (docs/operations.md#the-registry-mirror). Which skills are behind is the registry's own
 * outbox, `mirror_pending`, filled by triggers in the transaction of every change; a write rewrites
 * only those skills' files, so its cost follows what changed, not the library's size. Changes of code
 * or status flush at once; the counter updates of every invocation are coalesced, so the hot path
 * pays no fsync.
 */
export class MirrorWriter {
  private pending: NodeJS.Timeout | undefined;
  /** A write asked for after the current reply and not yet started. */
  private due = false;
  private writing: Promise<void> = Promise.resolve();
  private retry: NodeJS.Timeout | undefined;
  /** Whether an older home's whole-file mirror may still be on disk (removed once every skill has its file). */
  private legacyChecked = false;

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    private readonly logger: Logger,
    private readonly coalesceMs = 1_000,
    private readonly retryMs = 5_000,
  ) {}

  /** Writes every skill's file that is behind the registry now (after any write already in progress). */
  async flush(): Promise<void> {
    this.due = false;
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    const next = this.writing.then(() => this.drain());
    this.writing = next.catch((error: unknown) => {
      this.logger.error({ err: error }, "could not write the registry mirror (.registry/)");
    });
    await next;
  }

  /** Rewrites every skill's file (RebuildIndexes: the operator's way to a mirror known to be whole). */
  async rewriteAll(): Promise<void> {
    this.registry.markWholeMirror();
    await this.flushOrLater();
  }

  /**
   * Writes the mirror now, and never fails the change that asked for it: the change is committed
   * in the registry and the files already, and its mark stays in the outbox. When the write fails
   * (a full or read-only disk), it is logged and tried again every `retryMs` until it succeeds, so
   * the mirror agrees with the registry again once the disk does
   * (docs/operations.md#full-disks-and-a-locked-registry).
   */
  async flushOrLater(): Promise<void> {
    try {
      await this.flush();
    } catch {
      this.retryLater();
    }
  }

  /**
   * Writes the mirror once the reply of the call that changed the registry has gone out
   * (src/reply-scope), so that the write is not on that caller's wait
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

  /** Writes the mirror soon; many calls within the window cost one write. */
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
   * One pass over the outbox in name order, a round at a time: read up to {@link ROUND} marks,
   * write those skills' files as the registry holds them now, fsync the directory once, then settle
   * the marks (each only if no later change replaced it: that change is written by the next pass,
   * which whoever made it asked for). Each entry is built when its file is written, so only a round's
   * entries are held at a time (docs/performance.md#memory-over-time).
   */
  private async drain(): Promise<void> {
    let after = "";
    for (;;) {
      const round = this.registry.pendingMirrorChanges(ROUND, after);
      if (round.length === 0) break;
      for (let next = 0; next < round.length; next += CONCURRENT_WRITES) {
        await Promise.all(round.slice(next, next + CONCURRENT_WRITES).map((change) => this.writeOne(change)));
      }
      await this.store.mirror.sync();
      this.registry.settleMirrorChanges(round);
      after = (round[round.length - 1] as MirrorChange).name;
    }
    if (!this.legacyChecked) {
      await this.store.mirror.removeLegacy();
      this.legacyChecked = true;
    }
  }

  private async writeOne({ name }: MirrorChange): Promise<void> {
    const record = this.registry.get(name);
    await this.store.mirror.write(name, record === undefined ? undefined : toMirrorEntry(record, this.registry.versions(name)));
  }
}
