import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the server received. */
export interface ReceivedRequest {
  readonly model: string;
  readonly input: readonly string[];
  readonly authorization: string | undefined;
}

/**
 * A real OpenAI-compatible `/v1/embeddings` server on 127.0.0.1 for tests, with deterministic
 * vectors (derived from a hash of the text, deliberately not unit length) and switchable faults.
 * Test-only: nothing in the service imports it.
 */
export class EmbeddingsTestServer {
  /** Every request, in arrival order. */
  readonly requests: ReceivedRequest[] = [];
  /** Vector length served; tests change it to simulate a model whose size changed. */
  dimensions = 8;
  /** How the next answers go wrong, if at all. */
  fault: "none" | "http-500" | "slow" | "ragged" | "reversed" = "none";
  /** How long "slow" waits before answering. */
  slowMs = 5_000;

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<EmbeddingsTestServer> {
    // Requests are handled on later turns of the event loop, after `instance` below exists.
    const server = createServer((req, res) => {
      instance.handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(String(error));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    const instance = new EmbeddingsTestServer(server, `http://127.0.0.1:${port}`);
    return instance;
  }

  /** The service's settings that make this server its routing embedder (cheap start-up indexing of seeded homes). */
  serviceEnv(): Record<string, string> {
    return {
      SKILL_ENGINE_EMBEDDER: "openai",
      EMBEDDING_BASE_URL: this.baseUrl,
      EMBEDDING_MODEL: "loopback",
      EMBEDDING_DIMENSIONS: String(this.dimensions),
    };
  }

  /** The vector the server returns for `text` under `model`, before any normalization. */
  rawVector(model: string, text: string): number[] {
    const digest = createHash("sha256").update(`${model}\u0000${text}`).digest();
    return Array.from({ length: this.dimensions }, (_, i) => ((digest[i % digest.length] as number) - 127.5) * 3);
  }

  async stop(): Promise<void> {
    // Drop the connections a "slow" answer still holds, or close() waits for them.
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== "POST" || req.url !== "/v1/embeddings") {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
      return;
    }
    let raw = "";
    for await (const chunk of req) raw += String(chunk);
    const { model, input } = JSON.parse(raw) as { model: string; input: string[] };
    this.requests.push({ model, input, authorization: req.headers.authorization });

    if (this.fault === "http-500") {
      res
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ error: { message: "model crashed: CUDA out of memory" } }));
      return;
    }
    if (this.fault === "slow") await new Promise((resolve) => setTimeout(resolve, this.slowMs).unref());
    let data = input.map((text, index) => ({ object: "embedding", index, embedding: this.rawVector(model, text) }));
    if (this.fault === "ragged" && data[1]) data[1].embedding = data[1].embedding.slice(1);
    if (this.fault === "reversed") data = data.reverse();
    res
      .writeHead(200, { "content-type": "application/json" })
      .end(JSON.stringify({ object: "list", model, data, usage: { prompt_tokens: 0, total_tokens: 0 } }));
  }
}
