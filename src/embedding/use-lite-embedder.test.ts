import { threadId } from "node:worker_threads";
import net from "node:net";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { EmbedderError } from "./embedder.js";
import { dot } from "./unit-vector.js";
import { UseLiteEmbedder } from "./use-lite-embedder.js";
import { loadUseLiteEncoder, USE_LITE_DIMENSIONS, type SentenceEncoder } from "./use-lite-encoder.js";
import { loadUseLiteEncoderInWorker } from "./use-lite-worker.js";

const SENTENCES = [
  "find movies by an actor",
  "search for a person and list their film credits",
  "delete a reminder",
  "convert a temperature from celsius to fahrenheit",
  "what's the weather in Paris tomorrow",
  "get the weather forecast for a city",
  "send an email to a contact",
  "résumé naïve café — ünïcödé 🙂",
  "",
  "a much longer description of a skill that reads a CSV file, groups the rows by a column, sums another column and returns the totals as JSON",
];

describe("UseLiteEmbedder (the real model, offline)", () => {
  // One model on this thread for most tests, and one in a worker for the default's own checks.
  let encoder: SentenceEncoder | undefined;
  let loads = 0;
  let connects = 0;
  let loadMs = 0;
  let embedder: UseLiteEmbedder;

  beforeAll(async () => {
    // Any network use during the load (a download, a hub lookup) would open a socket. The spy
    // sees this thread only, which is why the shared model loads here rather than in a worker.
    const connect = vi.spyOn(net.Socket.prototype, "connect");
    embedder = new UseLiteEmbedder({
      loader: async () => {
        loads++;
        encoder = await loadUseLiteEncoder();
        return encoder;
      },
    });
    try {
      const started = performance.now();
      // Three concurrent first calls: one load between them.
      const results = await Promise.all([embedder.embed(["a"]), embedder.embed(["b", "c"]), embedder.embed(["d"])]);
      loadMs = performance.now() - started;
      expect(results.map((r) => r.length)).toEqual([1, 2, 1]);
    } finally {
      connects = connect.mock.calls.length;
      connect.mockRestore();
    }
  });

  afterAll(async () => {
    await embedder.close();
  });

  it("loads once for concurrent first calls, without opening a socket", () => {
    expect(loads).toBe(1);
    expect(connects).toBe(0);
    expect(embedder.modelId).toMatch(/^use-lite-en@\d+\.\d+\.\d+/);
    console.log(
      `USE-lite: load + warm-up + first calls ${loadMs.toFixed(0)} ms; RSS ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB`,
    );
  });

  it("runs in a worker thread by default", async () => {
    const byDefault = new UseLiteEmbedder();
    try {
      expect(await byDefault.embed(["find movies by an actor"])).toHaveLength(1);
      expect(byDefault.encoderThreadId).toBeGreaterThan(0);
      expect(byDefault.encoderThreadId).not.toBe(threadId);
    } finally {
      await byDefault.close();
    }
  });

  it("in a worker, gives the same vectors as on this thread, and replaces a worker that died", async () => {
    const workers: SentenceEncoder[] = [];
    const inWorker = new UseLiteEmbedder({
      loader: async () => {
        // The first load is a real worker; the reload after its death reuses this thread's model
        // so that this test loads the weights once more, not twice.
        workers.push(workers.length === 0 ? await loadUseLiteEncoderInWorker() : encoder!);
        return workers.at(-1)!;
      },
    });
    const [there] = await inWorker.embed(["find movies by an actor"]);
    const [here] = await embedder.embed(["find movies by an actor"]);
    expect(maxAbsDifference(here!, there!)).toBeLessThan(1e-5);

    await workers[0]!.dispose(); // terminates the worker thread, as a crash would
    expect(workers[0]!.dead).toBe(true);
    expect(await inWorker.embed(["x"])).toHaveLength(1);
    expect(workers).toHaveLength(2);
    // No inWorker.close(): it would dispose this thread's shared model.
  });

  it("returns one 512-dimensional unit vector per text, in order", async () => {
    const vectors = await embedder.embed(SENTENCES);
    expect(vectors).toHaveLength(SENTENCES.length);
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(USE_LITE_DIMENSIONS);
      expect(Math.sqrt(dot(vector, vector))).toBeCloseTo(1, 5);
    }
    expect(embedder.dimensions).toBe(USE_LITE_DIMENSIONS);
    expect(await embedder.embed([])).toEqual([]);
  });

  it("places related requests closer than unrelated ones", async () => {
    const [query, related, unrelated, weather, forecast, email] = await embedder.embed([
      "find movies by an actor",
      "search for a person and list their film credits",
      "delete a reminder",
      "what's the weather in Paris tomorrow",
      "get the weather forecast for a city",
      "send an email to a contact",
    ]);
    const similarity = {
      movieVsCredits: dot(query!, related!),
      movieVsReminder: dot(query!, unrelated!),
      weatherVsForecast: dot(weather!, forecast!),
      weatherVsEmail: dot(weather!, email!),
    };
    console.log("USE-lite cosine similarities", similarity);
    expect(similarity.movieVsCredits).toBeGreaterThan(similarity.movieVsReminder);
    expect(similarity.weatherVsForecast).toBeGreaterThan(similarity.weatherVsEmail);
  });

  it("gives the same vectors batched, split into small batches, and one at a time", async () => {
    const batched = await embedder.embed(SENTENCES);
    // A second adapter over the already loaded model, with batches of 3 (10 texts → 4 model calls).
    const small = new UseLiteEmbedder({ batchSize: 3, loader: async () => encoder! });
    const split = await small.embed(SENTENCES);
    const single: Float32Array[] = [];
    for (const sentence of SENTENCES) single.push(...(await embedder.embed([sentence])));
    for (let i = 0; i < SENTENCES.length; i++) {
      expect(maxAbsDifference(batched[i]!, single[i]!), `text ${i}`).toBeLessThan(1e-5);
      expect(maxAbsDifference(split[i]!, single[i]!), `text ${i}`).toBeLessThan(1e-5);
    }
  });

  it("gives an empty text a vector wherever it sits in a batch", async () => {
    // Raw, the encoder drops a trailing text with no tokens: 2 texts in, 1 vector out.
    expect(await encoder!.embed(["hello", ""])).toHaveLength(1);
    const [alone] = await embedder.embed([""]);
    const [, last] = await embedder.embed(["hello", ""]);
    const [first] = await embedder.embed(["", "hello"]);
    expect(maxAbsDifference(alone!, last!)).toBeLessThan(1e-5);
    expect(maxAbsDifference(alone!, first!)).toBeLessThan(1e-5);
  });

  // Speed is measured by npm run bench:routing (the real model's per-query cost); here, the work done.
  it("sends the model one call per 16 texts by default, and one per text when called one at a time", async () => {
    const calls: number[] = [];
    const counting = new UseLiteEmbedder({
      loader: async () => ({
        embed: (texts) => {
          calls.push(texts.length);
          return encoder!.embed(texts);
        },
        dispose: () => undefined,
        threadId: 0,
      }),
    });
    const texts = Array.from({ length: 32 }, (_, i) => `${SENTENCES[i % SENTENCES.length]} (variant ${i})`);
    await counting.embed(["warm-up happens at load"]);
    calls.length = 0;
    expect(await counting.embed(texts)).toHaveLength(32);
    expect(calls).toEqual([16, 16]);
    calls.length = 0;
    for (const text of texts.slice(0, 4)) await counting.embed([text]);
    expect(calls).toEqual([1, 1, 1, 1]);
  });

  it("reports a failed load as EmbedderError and loads again on the next call", async () => {
    let attempts = 0;
    const flaky = new UseLiteEmbedder({
      loader: async () => {
        attempts++;
        if (attempts === 1) throw new Error("ENOENT: model.json");
        return encoder!;
      },
    });
    const failure = await flaky.embed(["x"]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(EmbedderError);
    expect((failure as EmbedderError).message).toContain("ENOENT: model.json");
    expect(await flaky.embed(["x"])).toHaveLength(1);
    expect(attempts).toBe(2);
  });

  it("refuses to embed after close", async () => {
    let disposed = 0;
    const closing = new UseLiteEmbedder({
      loader: async () => ({ embed: (texts) => encoder!.embed(texts), dispose: () => void disposed++, threadId: 0 }),
    });
    await closing.embed(["x"]);
    await closing.close();
    await closing.close();
    expect(disposed).toBe(1);
    await expect(closing.embed(["x"])).rejects.toBeInstanceOf(EmbedderError);
  });
});

function maxAbsDifference(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}
