import type { Worker } from "node:worker_threads";
import type { SentenceEncoder } from "./use-lite-encoder.js";

/**
 * The protocol of an encoder worker: it loads a sentence encoder, posts `{type: "ready", runtime?,
 * fallbackReason?}` (or `{type: "failed", error}`), then answers each `{id, texts}` with
 * `{type: "result", id, vectors | error}`, one model run at a time, in arrival order.
 */
type WorkerMessage =
  | { type: "ready"; runtime?: string; fallbackReason?: string }
  | { type: "failed"; error: string }
  | { type: "result"; id: number; vectors?: number[][]; error?: string };

interface Pending {
  resolve(vectors: number[][]): void;
  reject(error: Error): void;
}

/** Resolves once the worker's model is ready; a worker that fails to load is terminated. */
export async function startEncoderWorker(worker: Worker): Promise<SentenceEncoder> {
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const fail = (error: Error): void => {
      cleanUp();
      void worker.terminate();
      reject(error);
    };
    const onMessage = (message: WorkerMessage): void => {
      if (message.type === "ready") {
        cleanUp();
        resolve(message);
      } else if (message.type === "failed") fail(new Error(message.error));
    };
    const onError = (error: Error): void => fail(error);
    const onExit = (code: number): void => fail(new Error(`the encoder worker exited with code ${code} while loading`));
    const cleanUp = (): void => {
      worker.off("message", onMessage).off("error", onError).off("exit", onExit);
    };
    worker.on("message", onMessage).on("error", onError).on("exit", onExit);
  });
  return new WorkerEncoder(worker, ready);
}

type ReadyMessage = Extract<WorkerMessage, { type: "ready" }>;

class WorkerEncoder implements SentenceEncoder {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private deathReason: string | undefined;

  readonly runtime: string | undefined;
  readonly fallbackReason: string | undefined;

  constructor(
    private readonly worker: Worker,
    ready: ReadyMessage,
  ) {
    this.runtime = ready.runtime;
    this.fallbackReason = ready.fallbackReason;
    // An idle encoder must not keep the process alive; a pending call must (see track).
    worker.unref();
    worker.on("message", (message: WorkerMessage) => {
      if (message.type === "result") this.settle(message);
    });
    worker.on("error", (error) => this.die(`the encoder worker failed: ${error.message}`));
    worker.on("exit", (code) => this.die(`the encoder worker exited with code ${code}`));
  }

  get dead(): boolean {
    return this.deathReason !== undefined;
  }

  get threadId(): number {
    return this.worker.threadId;
  }

  embed(texts: string[]): Promise<number[][]> {
    if (this.deathReason !== undefined) return Promise.reject(new Error(this.deathReason));
    const id = this.nextId++;
    return new Promise<number[][]>((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  async dispose(): Promise<void> {
    if (this.deathReason !== undefined) return;
    this.die("the encoder was disposed");
    await this.worker.terminate();
  }

  private settle(message: { id: number; vectors?: number[][]; error?: string }): void {
    const call = this.pending.get(message.id);
    if (call === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.worker.unref();
    if (message.vectors !== undefined) call.resolve(message.vectors);
    else call.reject(new Error(message.error ?? "the encoder worker answered neither vectors nor an error"));
  }

  private die(reason: string): void {
    if (this.deathReason !== undefined) return;
    this.deathReason = reason;
    for (const call of this.pending.values()) call.reject(new Error(reason));
    this.pending.clear();
    this.worker.unref();
  }
}
