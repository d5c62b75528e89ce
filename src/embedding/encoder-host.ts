import type { Worker } from "node:worker_threads";
import { workerChannel, type EncoderChannel, type EncoderMessage } from "./encoder-channel.js";
import type { SentenceEncoder } from "./use-lite-encoder.js";

interface Pending {
  resolve(vectors: number[][]): void;
  reject(error: Error): void;
}

type ReadyMessage = Extract<EncoderMessage, { type: "ready" }>;

/** Resolves once the host's model is ready (protocol: `EncoderMessage`); a host that fails to load is stopped. */
export async function startEncoder(channel: EncoderChannel): Promise<SentenceEncoder> {
  const ready = await new Promise<ReadyMessage>((resolve, reject) => {
    const fail = (error: Error): void => {
      cleanUp();
      void channel.stop();
      reject(error);
    };
    const offMessage = channel.onMessage((message) => {
      if (message.type === "ready") {
        cleanUp();
        resolve(message);
      } else if (message.type === "failed") fail(new Error(message.error));
    });
    const offEnd = channel.onEnd((reason) => fail(new Error(`${reason} while loading`)));
    const cleanUp = (): void => {
      offMessage();
      offEnd();
    };
  });
  return new ChannelEncoder(channel, ready);
}

/** {@link startEncoder} over a worker thread. */
export function startEncoderWorker(worker: Worker): Promise<SentenceEncoder> {
  return startEncoder(workerChannel(worker));
}

class ChannelEncoder implements SentenceEncoder {
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private deathReason: string | undefined;

  readonly runtime: string | undefined;
  readonly fallbackReason: string | undefined;

  constructor(
    private readonly channel: EncoderChannel,
    ready: ReadyMessage,
  ) {
    this.runtime = ready.runtime;
    this.fallbackReason = ready.fallbackReason;
    // An idle encoder must not keep the process alive; a pending call must (see embed).
    channel.unref();
    channel.onMessage((message) => {
      if (message.type === "result") this.settle(message);
    });
    channel.onEnd((reason) => this.die(reason));
  }

  get dead(): boolean {
    return this.deathReason !== undefined;
  }

  get threadId(): number {
    return this.channel.id;
  }

  get isolation(): EncoderChannel["isolation"] {
    return this.channel.isolation;
  }

  embed(texts: string[]): Promise<number[][]> {
    if (this.deathReason !== undefined) return Promise.reject(new Error(this.deathReason));
    const id = this.nextId++;
    return new Promise<number[][]>((resolve, reject) => {
      if (this.pending.size === 0) this.channel.ref();
      this.pending.set(id, { resolve, reject });
      this.channel.send({ id, texts });
    });
  }

  async dispose(): Promise<void> {
    if (this.deathReason !== undefined) return;
    this.die("the encoder was disposed");
    await this.channel.stop();
  }

  private settle(message: { id: number; vectors?: number[][]; error?: string }): void {
    const call = this.pending.get(message.id);
    if (call === undefined) return;
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.channel.unref();
    if (message.vectors !== undefined) call.resolve(message.vectors);
    else call.reject(new Error(message.error ?? "the encoder host answered neither vectors nor an error"));
  }

  private die(reason: string): void {
    if (this.deathReason !== undefined) return;
    this.deathReason = reason;
    for (const call of this.pending.values()) call.reject(new Error(reason));
    this.pending.clear();
    this.channel.unref();
  }
}
