import PQueue from "p-queue";
import { QueueFullError, RunCancelledError } from "../errors/index.js";

/**
 * A bounded queue in front of the engine: at most `concurrency` runs at once and at most
 * `maxQueued` waiting. A full queue answers at once (RESOURCE_EXHAUSTED) instead of letting
 * latency grow without bound; a caller that goes away while waiting leaves the queue.
 */
export class RunQueue {
  private readonly queue: PQueue;

  constructor(
    concurrency: number,
    private readonly maxQueued: number,
  ) {
    this.queue = new PQueue({ concurrency });
  }

  get running(): number {
    return this.queue.pending;
  }

  get waiting(): number {
    return this.queue.size;
  }

  async submit<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw cancellationOf(signal);
    if (this.queue.size >= this.maxQueued) throw new QueueFullError(this.running, this.waiting);
    try {
      return (await this.queue.add(task, signal ? { signal, throwOnTimeout: true } : { throwOnTimeout: true })) as T;
    } catch (error) {
      if (signal?.aborted) throw cancellationOf(signal);
      throw error;
    }
  }

  /** Resolves when nothing is running or waiting. */
  async drain(): Promise<void> {
    this.queue.clear();
    await this.queue.onIdle();
  }
}

/** Maps an aborted signal's reason onto the service's cancellation error. */
export function cancellationOf(signal: AbortSignal): RunCancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof RunCancelledError) return reason;
  return new RunCancelledError("cancelled");
}
