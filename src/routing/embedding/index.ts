/** Sentence embeddings for routing: the port, its adapters and the content-hash cache. The only way in. */
export { EmbedderError } from "./embedder.js";
export type { Embedder } from "./embedder.js";
export { UseLiteEmbedder } from "./use-lite-embedder.js";
export type { UseLiteEmbedderOptions } from "./use-lite-embedder.js";
export { USE_LITE_DIMENSIONS, loadUseLiteEncoder } from "./use-lite-encoder.js";
export type { SentenceEncoder, SentenceEncoderLoader } from "./use-lite-encoder.js";
export { loadUseLiteEncoderInWorker } from "./use-lite-worker.js";
export { OpenAiEmbedder } from "./openai-embedder.js";
export type { OpenAiEmbedderOptions } from "./openai-embedder.js";
export { CachedEmbedder, textHash } from "./embedding-cache.js";
export type { EmbeddingStore } from "./embedding-cache.js";
export { SqliteEmbeddingStore } from "./sqlite-embedding-store.js";
export { dot, toUnitVector } from "./unit-vector.js";
