/**
 * The rewrites of one file, coalesced: `schedule()` asks for one within `coalesceMs` (many calls
 * in that window cost one write), `flush()` writes now, after any write in progress, and `close()`
 * writes what is still pending and waits. Writes never overlap; a failed one goes to `onError`
 * (and to the caller of `flush`), and the next write is tried as usual.
 */
export class CoalescedWrites {
  private pending: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
    private readonly coalesceMs: number,
  ) {}

  schedule(): void {
    if (this.pending) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.flush().catch(() => undefined);
    }, this.coalesceMs);
    this.pending.unref();
  }

  async flush(): Promise<void> {
    if (this.pending) {
      clearTimeout(this.pending);
      this.pending = undefined;
    }
    const next = this.writing.then(() => this.write());
    this.writing = next.catch(this.onError);
    await next;
  }

  async close(): Promise<void> {
    if (this.pending) await this.flush().catch(() => undefined);
    await this.writing;
  }
}
