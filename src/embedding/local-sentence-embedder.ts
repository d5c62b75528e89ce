import { performance } from "node:perf_hooks";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "pino";
import { errorMessage } from "../errors/index.js";
import { batches } from "./batches.js";
import { EmbedderError, type Embedder } from "./embedder.js";
import { toUnitVector } from "./unit-vector.js";
import type { SentenceEncoder, SentenceEncoderLoader } from "./use-lite-encoder.js";

export interface LocalEmbedderOptions {
  /**
   * Texts per model call. Batching amortizes the per-call cost (short queries: ~16 ms alone, ~5 ms
   * each in a batch of 8); the bound keeps one call short, so queries queued behind a bulk
   * re-embed wait little, and keeps the WebAssembly heap, which never shrinks, small.
   * @default 16
   */
  readonly batchSize?: number;
  /** Receives one line when the model has loaded. */
  readonly logger?: Logger;
  /**
   * Where the model runs: on this thread (simpler, for scripts and benchmarks) or in a worker
   * thread, so the event loop stays free (the default of every embedder built on this one);
   * tests wrap a loader to count loads.
   */
  readonly loader?: SentenceEncoderLoader;
}

/** What a local model is: its id, its vector size, how to load it and how it wants its input. */
export interface LocalModel {
  readonly modelId: string;
  readonly dimensions: number;
  readonly defaultLoader: SentenceEncoderLoader;
  /** Maps a text to what the encoder is given (a model with a quirk about some inputs). */
  readonly toInput?: (text: string) => string;
}

/**
 * A sentence encoder that runs in this process, offline, with its weights shipped inside an npm
 * package (USE-lite, MiniLM).
 *
 * The model loads on the first `embed` call (concurrent first calls share one load), followed by
 * a warm-up inference so that the first real query does not pay for kernel set-up. A failed load,
 * or a worker that died, is forgotten and the next call loads again.
 */
export class LocalSentenceEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  private readonly toInput: (text: string) => string;
  private readonly batchSize: number;
  private readonly loader: SentenceEncoderLoader;
  private readonly logger: Logger | undefined;
  private loading: Promise<SentenceEncoder> | undefined;
  /** What `loading` resolved to, once it has. */
  private current: SentenceEncoder | undefined;
  private closed = false;

  constructor(model: LocalModel, options: LocalEmbedderOptions = {}) {
    const batchSize = options.batchSize ?? 16;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new RangeError(`${model.modelId} batchSize must be a positive integer, got ${batchSize}`);
    }
    this.batchSize = batchSize;
    this.loader = options.loader ?? model.defaultLoader;
    this.logger = options.logger;
    this.modelId = model.modelId;
    this.dimensions = model.dimensions;
    this.toInput = model.toInput ?? ((text) => text);
  }

  /** The thread the loaded model runs on (0: the main thread), for the start-up log and tests; undefined before the first load. */
  get encoderThreadId(): number | undefined {
    return this.current?.threadId;
  }

  /**
   * What computes the loaded model, where, and (when it is not the configured runtime) why;
   * undefined before the first load.
   */
  get encoderRuntime(): Pick<SentenceEncoder, "runtime" | "fallbackReason" | "isolation"> | undefined {
    const current = this.current;
    return current && { runtime: current.runtime, fallbackReason: current.fallbackReason, isolation: current.isolation };
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const encoder = await this.encoder();
    const vectors: Float32Array[] = [];
    for (const [i, batch] of batches(texts.map(this.toInput), this.batchSize).entries()) {
      // An encoder on this thread settles through microtasks only; without a turn of the event
      // loop between batches, a bulk re-embed would starve every socket until it finished.
      if (i > 0) await nextTurn();
      const raw = await this.run(encoder, batch);
      if (raw.length !== batch.length) {
        throw new EmbedderError(this.modelId, `the sentence encoder returned ${raw.length} vectors for ${batch.length} texts`);
      }
      for (const values of raw) vectors.push(this.toVector(values));
    }
    return vectors;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const loading = this.loading;
    this.loading = undefined;
    this.current = undefined;
    const encoder = await loading?.catch(() => undefined);
    await encoder?.dispose();
  }

  private async encoder(): Promise<SentenceEncoder> {
    if (this.closed) throw new EmbedderError(this.modelId, "the embedder was closed");
    this.loading ??= this.load();
    const encoder = await this.loading;
    if (!encoder.dead) return encoder;
    // The worker died between calls: start a new one rather than fail this call.
    this.forget(encoder);
    return this.encoder();
  }

  private async load(): Promise<SentenceEncoder> {
    const started = performance.now();
    let encoder: SentenceEncoder | undefined;
    try {
      encoder = await this.loader();
      const [probe] = await encoder.embed(["warm-up"]);
      if (probe?.length !== this.dimensions) {
        throw new EmbedderError(
          this.modelId,
          `the sentence encoder produced ${probe?.length ?? 0} dimensions, expected ${this.dimensions}`,
        );
      }
      this.current = encoder;
      const loaded = {
        modelId: this.modelId,
        loadMs: Math.round(performance.now() - started),
        threadId: encoder.threadId,
        ...(encoder.runtime === undefined ? {} : { runtime: encoder.runtime }),
        ...(encoder.isolation === undefined ? {} : { isolation: encoder.isolation }),
      };
      if (encoder.fallbackReason === undefined) this.logger?.info(loaded, "sentence encoder loaded");
      else this.logger?.warn({ ...loaded, reason: encoder.fallbackReason }, "sentence encoder loaded on its fallback runtime");
      return encoder;
    } catch (error) {
      // Forget the failed load so that a later call tries again instead of failing forever.
      this.loading = undefined;
      await encoder?.dispose();
      if (error instanceof EmbedderError) throw error;
      throw new EmbedderError(this.modelId, `could not load the sentence encoder: ${errorMessage(error)}`, { cause: error });
    }
  }

  private async run(encoder: SentenceEncoder, batch: string[]): Promise<number[][]> {
    try {
      return await encoder.embed(batch);
    } catch (error) {
      if (encoder.dead) this.forget(encoder);
      throw new EmbedderError(this.modelId, `the sentence encoder failed: ${errorMessage(error)}`, { cause: error });
    }
  }

  /** Drops `encoder` as the loaded one, unless a newer load already replaced it. */
  private forget(encoder: SentenceEncoder): void {
    if (this.current !== encoder) return;
    this.current = undefined;
    this.loading = undefined;
  }

  private toVector(values: number[]): Float32Array {
    if (values.length !== this.dimensions) {
      throw new EmbedderError(
        this.modelId,
        `the sentence encoder returned a ${values.length}-dimensional vector, expected ${this.dimensions}`,
      );
    }
    const unit = toUnitVector(values);
    if (unit === undefined) throw new EmbedderError(this.modelId, "the sentence encoder returned a zero or non-finite vector");
    return unit;
  }
}
