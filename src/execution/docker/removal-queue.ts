/**
 * Container removal off the run's hot path (docs/performance.md#container-removal): a finished
 * run hands its container here and its caller has the answer at once; a fixed number of workers
 * remove what waits, oldest first, each batch as it has accumulated. The number waiting is
 * bounded: a run that finds the queue full waits for room, so under a sustained overload the
 * removals slow the runs down instead of piling up stopped containers on the engine.
 */
export interface RemovalQueueOptions<T> {
  /** Removes one item; must not throw (a failure is the remover's to log). */
  readonly remove: (item: T) => Promise<void>;
  /** Removals at once. */
  readonly workers: number;
  /** Items waiting at most; `enqueue` beyond that waits until one has been taken. */
  readonly maxWaiting: number;
  /** Told each time a removal finished (the warm pool resumes refills on it); must not throw. */
  readonly onRemoved?: () => void;
}

export class RemovalQueue<T> {
  private readonly waiting: T[] = [];
  private readonly roomWaiters: Array<() => void> = [];
  private readonly idleWaiters: Array<() => void> = [];
  private active = 0;

  constructor(private readonly options: RemovalQueueOptions<T>) {
    if (options.workers < 1) throw new RangeError("a removal queue needs at least one worker");
    if (options.maxWaiting < 1) throw new RangeError("a removal queue must let at least one item wait");
  }

  /** Items not removed yet: waiting plus being removed. */
  get pending(): number {
    return this.waiting.length + this.active;
  }

  /** Queues `item`; resolves once it is queued (at once unless the queue is full). */
  async enqueue(item: T): Promise<void> {
    while (this.waiting.length >= this.options.maxWaiting) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    this.waiting.push(item);
    this.pump();
  }

  /** Resolves when nothing waits and nothing is being removed (items queued meanwhile included). */
  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private pump(): void {
    while (this.active < this.options.workers && this.waiting.length > 0) {
      const item = this.waiting.shift() as T;
      this.roomWaiters.shift()?.();
      this.active++;
      void this.options
        .remove(item)
        .catch(() => undefined)
        .finally(() => {
          this.active--;
          this.options.onRemoved?.();
          this.pump();
          if (this.pending === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
        });
    }
  }
}
