import { LocalSentenceEmbedder, type LocalEmbedderOptions } from "./local-sentence-embedder.js";
import { MINILM_DIMENSIONS, miniLmPackageVersion } from "./minilm-model.js";
import type { MiniLmRuntime } from "./minilm-runtime.js";
import { miniLmLoader } from "./minilm-host.js";

/** Options of {@link MiniLmEmbedder}. */
export interface MiniLmEmbedderOptions extends LocalEmbedderOptions {
  /**
   * What computes the model: ONNX Runtime's native kernels (in a child process), or TensorFlow.js
   * on WebAssembly (in a worker thread). "native" falls back to "wasm" (with a warning) where its addon cannot load.
   * Ignored when `loader` is given. @default "native"
   */
  readonly runtime?: MiniLmRuntime;
}

/**
 * The default embedder: all-MiniLM-L6-v2 (384 dimensions), in process and offline
 * (docs/routing.md#embedders). Chosen over USE-lite because it retrieves tools better, measured
 * on catalogs nobody tuned for (`npm run bench:routing`).
 */
export class MiniLmEmbedder extends LocalSentenceEmbedder {
  constructor(options: MiniLmEmbedderOptions = {}) {
    super(
      {
        // The weights' package version is in the id, so upgrading it re-embeds. The runtime is
        // not: both give the same vectors to float rounding.
        modelId: `minilm-l6-v2@${miniLmPackageVersion()}`,
        dimensions: MINILM_DIMENSIONS,
        defaultLoader: miniLmLoader(options.runtime ?? "native"),
      },
      options,
    );
  }
}
