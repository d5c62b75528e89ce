/**
 * Long learning work in bounded slices (docs/learning.md#large-sessions): better-sqlite3 and the
 * pattern code are synchronous, so a large session done in one go holds the event loop for every
 * other call of the process. Before each slice the work waits for its turn, which lets pending I/O
 * (other calls' requests and answers) run first, and stops if its call was cancelled.
 */

/** Resolves after the event loop has run its pending I/O callbacks once. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Turns shared by every slice of every recording: one slice per turn of the event loop, in the order
 * they asked. Yielding alone is not enough: the `setImmediate`s of sixteen recordings all run in the
 * same turn, so their sixteen slices would run back to back before any other call is read.
 */
export class SliceGate {
  private last: Promise<void> = Promise.resolve();

  /** Resolves when the caller may run one slice: after the slices that asked before it, each in a turn of its own. */
  turn(): Promise<void> {
    const mine = this.last.then(yieldToEventLoop);
    this.last = mine;
    return mine;
  }
}

/** How a piece of work is sliced: whose turns it takes (by default, a yield before each slice) and which call it serves. */
export interface Slicing {
  readonly turn?: () => Promise<void>;
  /** Fires when the call is cancelled or passes its deadline: the work stops before its next slice. */
  readonly signal?: AbortSignal | undefined;
}

/** Throws the signal's reason (the call's cancellation or deadline) once it has fired. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error("cancelled");
}

/**
 * Calls `work` on consecutive slices of at most `size` items (`offset` is the slice's first index),
 * each after a turn (see {@link Slicing}) and a check of the signal; an asynchronous `work` is awaited
 * before the next slice.
 */
export async function forEachSlice<T>(
  items: readonly T[],
  size: number,
  work: (slice: readonly T[], offset: number) => void | Promise<void>,
  slicing: Slicing = {},
): Promise<void> {
  checkSize(size);
  const turn = slicing.turn ?? yieldToEventLoop;
  for (let offset = 0; offset < items.length; offset += size) {
    await turn();
    throwIfAborted(slicing.signal);
    await work(items.slice(offset, offset + size), offset);
  }
}

/** `items.map(fn)` in slices of at most `size` items (see {@link forEachSlice}). */
export async function mapInSlices<T, R>(
  items: readonly T[],
  size: number,
  fn: (item: T, index: number) => R,
  slicing: Slicing = {},
): Promise<R[]> {
  const out: R[] = [];
  await forEachSlice(
    items,
    size,
    (slice, offset) => {
      slice.forEach((item, i) => out.push(fn(item, offset + i)));
    },
    slicing,
  );
  return out;
}

/** Drains `items` (a lazy iterable) into an array, `size` items a slice (see {@link forEachSlice}). */
export async function collectInSlices<T>(items: Iterable<T>, size: number, slicing: Slicing = {}): Promise<T[]> {
  checkSize(size);
  const turn = slicing.turn ?? yieldToEventLoop;
  const out: T[] = [];
  const iterator = items[Symbol.iterator]();
  for (;;) {
    await turn();
    throwIfAborted(slicing.signal);
    for (let n = 0; n < size; n++) {
      const next = iterator.next();
      if (next.done) return out;
      out.push(next.value);
    }
  }
}

function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`slice size must be a positive integer, got ${size}`);
}
