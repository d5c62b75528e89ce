import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { FakeQdrantServer, type FakeQdrantOptions } from "../../test/support/fake-qdrant-server.js";
import { eventually } from "../../test/support/poll.js";
import { FallbackVectorIndex } from "./fallback-vector-index.js";
import type { UnavailableReason } from "./index-errors.js";
import { QdrantVectorIndex } from "./qdrant-index.js";
import { SqliteVecIndex } from "./sqlite-vec-index.js";
import type { VectorIndexEntry } from "./vector-index.js";

const unit = (...values: number[]): Float32Array => {
  const norm = Math.hypot(...values);
  return Float32Array.from(values.map((v) => v / norm));
};
const entry = (name: string, vector: Float32Array): VectorIndexEntry => ({
  id: name,
  vector,
  payload: { type: "acquired_skill", name, owner: "local", visibility: "public", status: "active" },
});
const ALL = [entry("alpha", unit(1, 0, 0, 0)), entry("beta", unit(0, 1, 0, 0)), entry("gamma", unit(0, 0, 1, 0))];
const COLLECTION = "fallback_test";

describe("FallbackVectorIndex: Qdrant in front, the embedded index behind it", () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A stand-in Qdrant and an embedded index that may already hold entries (a home from before Qdrant). */
  async function setUp(options: { server?: FakeQdrantOptions; apiKey?: string; before?: VectorIndexEntry[]; timeoutMs?: number } = {}) {
    const server = new FakeQdrantServer(options.server);
    const url = await server.start();
    const db = new Database(":memory:");
    const embedded = new SqliteVecIndex(db);
    await embedded.ensure(4);
    await embedded.upsert(options.before ?? []);
    const reasons: UnavailableReason[] = [];
    const primary = new QdrantVectorIndex({
      url,
      collection: COLLECTION,
      // The stand-in answers at once; a deadline that a loaded machine could miss would fall back by itself.
      timeoutMs: options.timeoutMs ?? 30_000,
      ...(options.apiKey ? { apiKey: options.apiKey } : {}),
    });
    const index = new FallbackVectorIndex(primary, embedded, {
      logger: pino({ level: "silent" }),
      onUnavailable: (reason) => reasons.push(reason),
      initialBackoffMs: 20,
      maxBackoffMs: 100,
    });
    cleanups.push(
      () => {
        db.close();
      },
      () => server.stop(),
      () => index.close(),
    );
    return { server, index, reasons, points: () => server.collections.get(COLLECTION)?.points.size ?? 0 };
  }

  it("fills an empty Qdrant from the embedded index at start-up, then serves from it", async () => {
    const { server, index, points } = await setUp({ before: ALL });
    await index.ensure(4);
    // Until the copy is done, routes are answered from the embedded index and say so.
    await index.settled();
    expect(index.inStep).toBe(true);
    expect(points()).toBe(3);
    expect((await index.search(unit(0, 1, 0, 0), { limit: 1 }))[0]?.id).toBe("beta");
    expect(index.lastFallback).toBe("");
    expect(server.requestsTo("POST", /points\/query$/)).toHaveLength(1);
  });

  it("during an outage searches the embedded index without re-syncing per search; once back, one re-sync replays writes and removals", async () => {
    const { server, index, points } = await setUp({ before: ALL });
    await index.ensure(4);
    await index.settled();
    expect(points()).toBe(3);

    // Qdrant goes away for everything for a while.
    for (let i = 0; i < 400; i++) server.injectFault({ status: 503 });
    await index.remove(["alpha"]);
    await index.upsert([entry("delta", unit(0, 0, 0, 1))]);
    for (let i = 0; i < 20; i++) {
      const hits = await index.search(unit(0, 0, 0, 1), { limit: 1 });
      expect(hits[0]?.id).toBe("delta");
    }
    expect(index.lastFallback).toMatch(/^qdrant is overloaded; used the embedded index$/);
    // Twenty searches did not start twenty re-syncs: attempts follow the back-off, not the traffic.
    const attempts = server.requestsTo("GET", /^\/collections\/fallback_test$/).length;
    expect(attempts).toBeLessThan(20);

    // Back: the next attempt copies what was written and deletes what was removed meanwhile.
    server.clearFaults();
    await eventually("Qdrant back in step", () => (index.inStep ? true : undefined), { intervalMs: 10 });
    const names = [...(server.collections.get(COLLECTION)?.points.values() ?? [])].map((p) => p.payload["name"]).sort();
    expect(names).toEqual(["beta", "delta", "gamma"]);
    expect((await index.search(unit(0, 0, 0, 1), { limit: 1 }))[0]?.id).toBe("delta");
    expect(index.lastFallback).toBe("");
  });

  it("re-creates and refills a collection that disappeared while the service ran", async () => {
    const { server, index, reasons, points } = await setUp({ before: ALL });
    await index.ensure(4);
    await index.settled();
    server.collections.delete(COLLECTION);
    expect((await index.search(unit(1, 0, 0, 0), { limit: 1 }))[0]?.id).toBe("alpha");
    expect(index.lastFallback).toMatch(/lost its collection/);
    expect(reasons).toContain("missing");
    await eventually("the collection refilled", () => (index.inStep && points() === 3 ? true : undefined), { intervalMs: 10 });
    expect(server.collections.get(COLLECTION)?.payloadIndexes.size).toBe(5);
  });

  it("a wrong API key never stops the start: routes use the embedded index and say why", async () => {
    const { index, reasons } = await setUp({ server: { apiKey: "right" }, apiKey: "wrong", before: ALL });
    await index.ensure(4);
    await index.settled();
    expect((await index.search(unit(1, 0, 0, 0), { limit: 1 }))[0]?.id).toBe("alpha");
    expect(index.lastFallback).toBe("qdrant refused the API key (check QDRANT_API_KEY); used the embedded index");
    expect(reasons[0]).toBe("unauthorized");
  });

  it("a read-only key: reads would work, writes are forbidden, so Qdrant is never trusted to be in step", async () => {
    const { index, reasons } = await setUp({ server: { apiKey: "rw", readOnlyApiKey: "ro" }, apiKey: "ro", before: ALL });
    await index.ensure(4);
    await index.settled();
    expect((await index.search(unit(0, 0, 1, 0), { limit: 1 }))[0]?.id).toBe("gamma");
    expect(index.lastFallback).toMatch(/^qdrant forbade the write \(read-only key or locked storage\)/);
    expect(reasons[0]).toBe("forbidden");
  });

  it("never deletes a collection of that name with other vector parameters", async () => {
    const { server, index, reasons } = await setUp({ before: ALL });
    server.collections.set(COLLECTION, { size: 8, distance: "Dot", points: new Map(), payloadIndexes: new Map(), operations: 0 });
    const theirs = server.collections.get(COLLECTION);
    await index.ensure(4);
    await index.settled();
    expect(server.collections.get(COLLECTION)).toBe(theirs);
    expect(server.requestsTo("DELETE", /collections/)).toHaveLength(0);
    expect((await index.search(unit(1, 0, 0, 0), { limit: 1 }))[0]?.id).toBe("alpha");
    expect(index.lastFallback).toMatch(/has a collection of that name with other vector parameters \(left untouched\)/);
    expect(reasons[0]).toBe("incompatible");
  });

  it("a Qdrant that hangs never holds up close(): the copy stops and the next start copies again", async () => {
    // The answer and the client's deadline both longer than the test's own timeout: close() passes
    // only if it does not wait for either.
    const { server, index } = await setUp({ before: ALL, timeoutMs: 600_000 });
    server.injectFault({ delayMs: 600_000 });
    await index.ensure(4);
    await index.close();
    expect(index.inStep).toBe(false);
  });
});
