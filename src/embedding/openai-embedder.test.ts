import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { EmbedderError } from "./embedder.js";
import { EmbeddingsTestServer } from "../../test/support/embeddings-test-server.js";
import { OpenAiEmbedder } from "./openai-embedder.js";
import { dot, toUnitVector } from "./unit-vector.js";

describe("OpenAiEmbedder (against a real HTTP server on 127.0.0.1)", () => {
  let server: EmbeddingsTestServer;
  beforeAll(async () => {
    server = await EmbeddingsTestServer.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(() => {
    server.requests.length = 0;
    server.fault = "none";
    server.dimensions = 8;
  });

  const embedderFor = (overrides: Partial<ConstructorParameters<typeof OpenAiEmbedder>[0]> = {}) =>
    new OpenAiEmbedder({ baseUrl: server.baseUrl, model: "test-model", dimensions: 8, timeoutMs: 5_000, ...overrides });

  const failureOf = async (promise: Promise<unknown>): Promise<EmbedderError> => {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(EmbedderError);
    return error as EmbedderError;
  };

  it("returns the server's vectors, unit length, in input order, with the key as a bearer token", async () => {
    const embedder = embedderFor({ apiKey: "sk-test" });
    const vectors = await embedder.embed(["alpha", "beta", "alpha"]);
    expect(embedder.modelId).toBe("openai:test-model");
    expect(vectors).toHaveLength(3);
    for (const [i, text] of ["alpha", "beta", "alpha"].entries()) {
      expect(Math.sqrt(dot(vectors[i]!, vectors[i]!))).toBeCloseTo(1, 6);
      expect(Array.from(vectors[i]!)).toEqual(Array.from(toUnitVector(server.rawVector("test-model", text))!));
    }
    expect(server.requests).toEqual([{ model: "test-model", input: ["alpha", "beta", "alpha"], authorization: "Bearer sk-test" }]);
  });

  it("puts vectors back in input order when the server answers out of order", async () => {
    server.fault = "reversed";
    const [first, second] = await embedderFor().embed(["one", "two"]);
    expect(Array.from(first!)).toEqual(Array.from(toUnitVector(server.rawVector("test-model", "one"))!));
    expect(Array.from(second!)).toEqual(Array.from(toUnitVector(server.rawVector("test-model", "two"))!));
  });

  it("splits large inputs into sequential requests of at most batchSize texts", async () => {
    const texts = Array.from({ length: 7 }, (_, i) => `text ${i}`);
    const vectors = await embedderFor({ batchSize: 3 }).embed(texts);
    expect(server.requests.map((r) => r.input)).toEqual([texts.slice(0, 3), texts.slice(3, 6), texts.slice(6)]);
    expect(vectors.map((v) => Array.from(v))).toEqual(texts.map((t) => Array.from(toUnitVector(server.rawVector("test-model", t))!)));
    expect(await embedderFor().embed([])).toEqual([]);
    expect(server.requests).toHaveLength(3);
  });

  it("accepts a base URL that already ends in /v1", async () => {
    await embedderFor({ baseUrl: `${server.baseUrl}/v1/` }).embed(["x"]);
    expect(server.requests).toHaveLength(1);
  });

  it("turns an HTTP error into EmbedderError with the status and an excerpt of the body", async () => {
    server.fault = "http-500";
    const error = await failureOf(embedderFor().embed(["x"]));
    expect(error.kind).toBe("unavailable");
    expect(error.httpStatus).toBe(500);
    expect(error.modelId).toBe("openai:test-model");
    expect(error.message).toContain("HTTP 500");
    expect(error.message).toContain("CUDA out of memory");
  });

  it("gives up after timeoutMs when the server does not answer", async () => {
    server.fault = "slow";
    const error = await failureOf(embedderFor({ timeoutMs: 200 }).embed(["x"]));
    expect(error.message).toMatch(/did not answer within 200 ms/);
    expect(error.httpStatus).toBeUndefined();
  });

  it("refuses vectors of the wrong length, against the configuration or each other", async () => {
    server.dimensions = 16;
    expect((await failureOf(embedderFor({ dimensions: 8 }).embed(["x"]))).message).toMatch(
      /16-dimensional vector .*expected 8 \(the configured dimensions\)/,
    );

    server.dimensions = 8;
    server.fault = "ragged";
    expect((await failureOf(embedderFor().embed(["a", "b", "c"]))).message).toMatch(/7-dimensional vector for input 1; expected 8/);
  });

  it("learns its dimensions from one probe when none are configured", async () => {
    server.dimensions = 12;
    const embedder = await OpenAiEmbedder.create({ baseUrl: server.baseUrl, model: "probed", timeoutMs: 5_000 });
    expect(embedder.dimensions).toBe(12);
    expect(server.requests).toHaveLength(1);
    server.dimensions = 8;
    expect((await failureOf(embedder.embed(["x"]))).message).toMatch(/expected 12/);
  });

  it("reports an unreachable endpoint with the network error's code", async () => {
    const stopped = await EmbeddingsTestServer.start();
    await stopped.stop();
    const error = await failureOf(embedderFor({ baseUrl: stopped.baseUrl }).embed(["x"]));
    expect(error.message).toMatch(/could not reach embedding endpoint .*ECONNREFUSED/);
  });

  it("reports a body that is not an embeddings response", async () => {
    const error = await failureOf(embedderFor({ fetch: async () => new Response("<html>gateway</html>", { status: 200 }) }).embed(["x"]));
    expect(error.message).toMatch(/not an embeddings response: <html>gateway<\/html>/);
  });

  it("rejects nonsense options at construction", () => {
    expect(() => embedderFor({ dimensions: 0 })).toThrow(RangeError);
    expect(() => embedderFor({ timeoutMs: 0 })).toThrow(RangeError);
    expect(() => embedderFor({ baseUrl: "not a url" })).toThrow(/baseUrl is not a URL/);
  });
});
