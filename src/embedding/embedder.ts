import { UnavailableError } from "../errors/index.js";

/**
 * Port: turns texts into sentence embeddings for routing.
 *
 * Every vector an implementation returns is L2-normalized (length 1), so the cosine similarity
 * of two vectors is their dot product and an index can use inner-product or cosine distance
 * interchangeably. Vectors are only comparable with vectors of the same {@link modelId}.
 */
export interface Embedder {
  /**
   * Identifies the model and its weights. Two embedders with the same id produce the same vectors
   * for the same text, so caches and indexes key on it: a different id means re-embed everything.
   */
  readonly modelId: string;
  /** Length of every vector this embedder returns. */
  readonly dimensions: number;
  /**
   * Embeds `texts`, returning one unit vector per text in input order. Treat the vectors as
   * read-only: an implementation may hand the same array out twice (a cache, repeated texts).
   *
   * @throws {@link EmbedderError} when the backend cannot answer (not loaded, unreachable,
   *   timed out, or answered something unusable).
   */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
  /** Releases the backend (model memory, connections). Idempotent; later calls to `embed` fail. */
  close?(): Promise<void>;
}

/**
 * The embedding backend cannot answer: the local model failed to load or run, or a remote
 * endpoint was unreachable, timed out, answered an HTTP error or a malformed body. Unavailable (or
 * routing falls back to keywords), since the query itself was fine.
 */
export class EmbedderError extends UnavailableError {
  /** HTTP status of a remote endpoint's error answer; undefined when there was none. */
  readonly httpStatus: number | undefined;

  constructor(
    readonly modelId: string,
    message: string,
    options?: { cause?: unknown; httpStatus?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.httpStatus = options?.httpStatus;
  }
}
