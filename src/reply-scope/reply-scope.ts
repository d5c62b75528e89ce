import { AsyncLocalStorage } from "node:async_hooks";

/**
 * Longest a piece of deferred work waits for its call's reply. A call that never answers, or one
 * that itself waits for the deferred work (a registration that routes in the same call), costs at
 * most this instead of hanging.
 */
export const AFTER_REPLY_MAX_WAIT_MS = 100;

const current = new AsyncLocalStorage<ReplyScope>();

/**
 * The span of one call, from its handler's start to its reply having gone out, for work that must
 * not delay that reply (docs/performance.md#after-the-reply). The transport runs each call's
 * handler inside its scope ({@link ReplyScope.run}) and settles it once the call's status is sent.
 */
export class ReplyScope {
  private readonly waiting: Array<() => void> = [];
  private settled = false;

  /** Runs `serve` (the call's handler) and everything it starts inside this scope. */
  run<T>(serve: () => T): T {
    return current.run(this, serve);
  }

  /** The call's reply has been handed to the transport (or the call ended without one): deferred work runs. */
  settle(): void {
    if (this.settled) return;
    this.settled = true;
    // On the next turn of the event loop, not this one's immediates: the HTTP/2 frames of the
    // status are written at the end of this turn, and synchronous work (SQLite, serialising)
    // started before that delays them (measured: docs/performance.md#after-the-reply).
    for (const work of this.waiting.splice(0)) setTimeout(work, 0);
  }

  defer(work: () => void): void {
    if (this.settled) {
      setTimeout(work, 0);
      return;
    }
    let ran = false;
    const once = (): void => {
      if (ran) return;
      ran = true;
      clearTimeout(timer);
      work();
    };
    const timer = setTimeout(once, AFTER_REPLY_MAX_WAIT_MS);
    this.waiting.push(once);
  }
}

/**
 * Runs `work` once the reply of the call being served has gone out, or after
 * {@link AFTER_REPLY_MAX_WAIT_MS} at most; outside any call, on the next turn of the event loop.
 * For work whose result no caller waits for: rewriting the mirror, writing routing index rows,
 * refilling the warm pool.
 */
export function afterReply(work: () => void): void {
  const scope = current.getStore();
  if (scope) scope.defer(work);
  else setImmediate(work);
}

/** {@link afterReply} as a promise, for an async chain that should continue after the reply. */
export function untilReplied(): Promise<void> {
  return new Promise((resolve) => afterReply(resolve));
}
