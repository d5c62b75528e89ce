import { z } from "zod";
import { errorMessage } from "../errors/index.js";
import { batches } from "./batches.js";
import { EmbedderError, type Embedder } from "./embedder.js";
import { toUnitVector } from "./unit-vector.js";

/** How much of an error body goes into an error message: enough to read the server's reason. */
const BODY_EXCERPT_CHARS = 300;

export interface OpenAiEmbedderOptions {
  /** The server's root (`http://127.0.0.1:8080`); a trailing `/` or `/v1` is accepted too. */
  readonly baseUrl: string;
  /** Sent as `model`; also names the vectors in caches and indexes (`openai:<model>`). */
  readonly model: string;
  /** Sent as `Authorization: Bearer <apiKey>`; omit for servers without authentication. */
  readonly apiKey?: string;
  /**
   * The vector length the server must return. Without it, {@link OpenAiEmbedder.create} asks the
   * server once and every later answer must agree.
   */
  readonly dimensions?: number;
  /** Time allowed for one request, from sending it to reading the whole body. */
  readonly timeoutMs: number;
  /**
   * Texts per request. Hosted APIs accept a few thousand; small self-hosted servers prefer less.
   * @default 64
   */
  readonly batchSize?: number;
  /** @default the global fetch */
  readonly fetch?: typeof fetch;
}

const EmbeddingsResponse = z.object({
  data: z.array(
    z.object({
      embedding: z.array(z.number()),
      index: z.number().int().nonnegative(),
    }),
  ),
});

/**
 * Adapter for an OpenAI-compatible `POST /v1/embeddings` endpoint (OpenAI, vLLM, llama.cpp,
 * text-embeddings-inference, Ollama and most gateways speak it), for deployments that have one.
 * Batches are sent one after another, so a large rebuild never floods a small server.
 */
export class OpenAiEmbedder implements Embedder {
  readonly modelId: string;
  readonly dimensions: number;
  private readonly client: EmbeddingsClient;
  private readonly batchSize: number;

  /**
   * Builds an embedder whose vector length is known: from `options.dimensions` or, when that is
   * absent, from one probe request to the server (so a wrong URL, key or model fails at start-up).
   *
   * @throws {@link EmbedderError} when the probe fails.
   */
  static async create(options: OpenAiEmbedderOptions): Promise<OpenAiEmbedder> {
    if (options.dimensions !== undefined) return new OpenAiEmbedder({ ...options, dimensions: options.dimensions });
    const [vector] = await new EmbeddingsClient(options).post(["dimension probe"], undefined);
    return new OpenAiEmbedder({ ...options, dimensions: vector?.length ?? 0 });
  }

  /** Use {@link OpenAiEmbedder.create} when the dimensions are not known up front. */
  constructor(options: OpenAiEmbedderOptions & { readonly dimensions: number }) {
    const batchSize = options.batchSize ?? 64;
    if (!Number.isInteger(batchSize) || batchSize < 1) {
      throw new RangeError(`OpenAiEmbedder batchSize must be a positive integer, got ${batchSize}`);
    }
    if (!Number.isInteger(options.dimensions) || options.dimensions < 1) {
      throw new RangeError(`OpenAiEmbedder dimensions must be a positive integer, got ${options.dimensions}`);
    }
    this.client = new EmbeddingsClient(options);
    this.modelId = this.client.modelId;
    this.dimensions = options.dimensions;
    this.batchSize = batchSize;
  }

  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    const vectors: Float32Array[] = [];
    for (const batch of batches(texts, this.batchSize)) vectors.push(...(await this.client.post(batch, this.dimensions)));
    return vectors;
  }
}

/** One HTTP exchange with the endpoint, translated into unit vectors or an {@link EmbedderError}. */
class EmbeddingsClient {
  readonly modelId: string;
  private readonly url: string;
  private readonly where: string;
  private readonly fetch: typeof fetch;

  constructor(private readonly options: OpenAiEmbedderOptions) {
    if (!Number.isInteger(options.timeoutMs) || options.timeoutMs < 1) {
      throw new RangeError(`OpenAiEmbedder timeoutMs must be a positive integer, got ${options.timeoutMs}`);
    }
    this.url = `${rootOf(options.baseUrl)}/v1/embeddings`;
    this.where = `embedding endpoint ${this.url}`;
    this.modelId = `openai:${options.model}`;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** `dimensions` undefined: any length, as long as all vectors in the answer agree. */
  async post(texts: string[], dimensions: number | undefined): Promise<Float32Array[]> {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    let body: string;
    try {
      // One signal for the request and the body: a server that stalls mid-body times out too.
      const response = await this.fetch(this.url, {
        method: "POST",
        headers,
        body: JSON.stringify({ model: this.options.model, input: texts }),
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      body = await response.text();
      if (!response.ok) {
        throw new EmbedderError(this.modelId, `${this.where} answered HTTP ${response.status}: ${excerpt(body)}`, {
          httpStatus: response.status,
        });
      }
    } catch (error) {
      if (error instanceof EmbedderError) throw error;
      if (error instanceof DOMException && error.name === "TimeoutError") {
        throw new EmbedderError(this.modelId, `${this.where} did not answer within ${this.options.timeoutMs} ms`, { cause: error });
      }
      throw new EmbedderError(this.modelId, `could not reach ${this.where}: ${networkReason(error)}`, { cause: error });
    }
    return this.parse(body, texts.length, dimensions);
  }

  private parse(body: string, expected: number, dimensions: number | undefined): Float32Array[] {
    let data: z.infer<typeof EmbeddingsResponse>["data"];
    try {
      data = EmbeddingsResponse.parse(JSON.parse(body)).data;
    } catch (error) {
      throw new EmbedderError(this.modelId, `${this.where} answered a body that is not an embeddings response: ${excerpt(body)}`, {
        cause: error,
      });
    }
    if (data.length !== expected) {
      throw new EmbedderError(this.modelId, `${this.where} returned ${data.length} embeddings for ${expected} inputs`);
    }
    const length = dimensions ?? data[0]?.embedding.length ?? 0;
    // Servers may answer out of order; `index` says which input each vector belongs to.
    const vectors = new Array<Float32Array | undefined>(expected).fill(undefined);
    for (const item of data) {
      if (item.index >= expected || vectors[item.index] !== undefined) {
        throw new EmbedderError(this.modelId, `${this.where} returned a repeated or out-of-range index ${item.index}`);
      }
      if (item.embedding.length !== length) {
        const expectation = dimensions === undefined ? "as long as the others" : "the configured dimensions";
        throw new EmbedderError(
          this.modelId,
          `${this.where} returned a ${item.embedding.length}-dimensional vector for input ${item.index}; expected ${length} (${expectation})`,
        );
      }
      const unit = toUnitVector(item.embedding);
      if (unit === undefined) throw new EmbedderError(this.modelId, `${this.where} returned a zero vector for input ${item.index}`);
      vectors[item.index] = unit;
    }
    // Every slot is filled: as many unique in-range indexes as inputs.
    return vectors as Float32Array[];
  }
}

/**
 * The server root from a configured base URL. OpenAI's own clients take a base URL that already
 * ends in `/v1`; accepting both forms spares operators a 404 for a matter of convention.
 */
function rootOf(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new RangeError(`OpenAiEmbedder baseUrl is not a URL: ${JSON.stringify(baseUrl)}`);
  }
  return url.href.replace(/\/+$/, "").replace(/\/v1$/, "");
}

function excerpt(body: string): string {
  const flat = body.replace(/\s+/g, " ").trim();
  if (flat.length === 0) return "(empty body)";
  return flat.length > BODY_EXCERPT_CHARS ? `${flat.slice(0, BODY_EXCERPT_CHARS)}…` : flat;
}

/** fetch reports every network failure as "fetch failed"; the useful part (ECONNREFUSED…) is the cause. */
function networkReason(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === "string" ? `${code} (${cause.message})` : cause.message;
  }
  return errorMessage(error);
}
