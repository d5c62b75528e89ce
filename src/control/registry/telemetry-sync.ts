/**
 * Telemetry durability (docs/performance.md#telemetry-durability). With a sync interval > 0, an
 * invocation's telemetry commit does not wait for its own fsync: it is in the WAL (a process crash
 * loses nothing) and on disk at most one interval later. With 0, every telemetry commit is fsynced
 * before it returns, like every other write.
 */
import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { open as openFile } from "node:fs/promises";
import type Database from "better-sqlite3";

export class TelemetrySync {
  /** Whether telemetry commits skip their own fsync. */
  readonly relaxed: boolean;
  /** Telemetry commits written to the WAL but not yet flushed to disk. */
  private unsynced = false;
  private readonly timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Database.Database,
    private readonly file: string,
    syncMs: number,
  ) {
    this.relaxed = syncMs > 0;
    if (this.relaxed) {
      // A failed flush marks the WAL unsynced again and the next tick retries; it must not reject unheard.
      this.timer = setInterval(() => void this.flush().catch(() => undefined), syncMs);
      this.timer.unref();
    }
  }

  /**
   * Runs `commit` (one transaction) without its fsync, then marks the WAL for the next flush; a
   * result `urgent` picks (a status change others act on) is flushed at once. Only when relaxed.
   */
  withoutFsync<T>(commit: () => T, urgent: (result: T) => boolean): T {
    this.db.pragma("synchronous = NORMAL");
    try {
      const result = commit();
      this.unsynced = true;
      if (urgent(result)) void this.flush().catch(() => undefined);
      return result;
    } finally {
      this.db.pragma("synchronous = FULL");
    }
  }

  /**
   * Flushes telemetry committed without its own fsync (the WAL file, where SQLite put it) to disk.
   * Every other commit is FULL: its fsync of the WAL covers the telemetry written before it too.
   */
  async flush(): Promise<void> {
    const next = this.flushing.then(async () => {
      if (!this.unsynced) return;
      this.unsynced = false;
      const handle = await openFile(`${this.file}-wal`, "r").catch(() => undefined);
      if (!handle) return;
      try {
        await handle.datasync();
      } finally {
        await handle.close();
      }
    });
    this.flushing = next.catch(() => {
      // Not on disk yet: the next tick tries again.
      this.unsynced = true;
    });
    await next;
  }

  /** Stops the timer and flushes what is left, synchronously: the connection closes right after. */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    if (!this.unsynced) return;
    this.unsynced = false;
    try {
      const fd = openSync(`${this.file}-wal`, "r");
      try {
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
    } catch {
      // No WAL left (already checkpointed and removed): nothing to flush.
    }
  }
}
