import { LocalSentenceEmbedder, type LocalEmbedderOptions } from "./local-sentence-embedder.js";
import { MINILM_DIMENSIONS, miniLmPackageVersion } from "./minilm-encoder.js";
import { loadMiniLmEncoderInWorker } from "./minilm-worker.js";

/**
 * Options of {@link MiniLmEmbedder}. The loader defaults to {@link loadMiniLmEncoderInWorker}
 * (a worker thread); `loadMiniLmEncoder` runs the model on this thread.
 */
export type MiniLmEmbedderOptions = LocalEmbedderOptions;

/**
 * The default embedder: all-MiniLM-L6-v2 (384 dimensions), in process and offline
 * (docs/routing.md#embedders). Chosen over USE-lite because it retrieves tools better, measured
 * on catalogs nobody tuned for (`npm run bench:routing`).
 */
export class MiniLmEmbedder extends LocalSentenceEmbedder {
  constructor(options: MiniLmEmbedderOptions = {}) {
    super(
      {
        // The weights' package version is in the id, so upgrading it re-embeds.
        modelId: `minilm-l6-v2@${miniLmPackageVersion()}`,
        dimensions: MINILM_DIMENSIONS,
        defaultLoader: loadMiniLmEncoderInWorker,
      },
      options,
    );
  }
}
