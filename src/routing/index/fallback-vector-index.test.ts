import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeQdrantServer } from "../../../test/support/fake-qdrant-server.js";
import { FallbackVectorIndex } from "./fallback-vector-index.js";
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

describe("FallbackVectorIndex: Qdrant in front, the embedded index behind it", () => {
  let server: FakeQdrantServer;
  let db: Database.Database;
  let index: FallbackVectorIndex;
  let resyncs = 0;
  const all = [entry("alpha", unit(1, 0, 0, 0)), entry("beta", unit(0, 1, 0, 0)), entry("gamma", unit(0, 0, 1, 0))];

  beforeEach(async () => {
    server = new FakeQdrantServer();
    const url = await server.start();
    db = new Database(":memory:");
    resyncs = 0;
    const primary = new QdrantVectorIndex({ url, collection: "fallback_test", timeoutMs: 1_000 });
    const embedded = new SqliteVecIndex(db);
    index = new FallbackVectorIndex(
      primary,
      embedded,
      async () => {
        resyncs++;
        await index.upsert(all); // what RoutingService.reindexAll does: write everything again
      },
      pino({ level: "silent" }),
    );
    await index.ensure(4);
  });
  afterEach(async () => {
    await index.close();
    await server.stop();
    db.close();
  });

  it("serves from Qdrant, falls back to the embedded index while Qdrant is down, and brings Qdrant up to date when it answers", async () => {
    await index.upsert(all.slice(0, 2));
    expect((await index.search(unit(1, 0, 0, 0), { limit: 1 }))[0]?.id).toBe("alpha");
    expect(index.lastFallback).toBe("");
    const queriesBefore = server.requestsTo("POST", /points\/query/).length;
    expect(queriesBefore).toBeGreaterThan(0);

    // Qdrant drops the connection on the next write: the embedded index still gets it.
    server.injectFault({ path: /points/, destroy: true });
    await index.upsert([all[2] as VectorIndexEntry]);
    // Still down when the next search tries to resync it.
    server.injectFault({ path: /points/, destroy: true });
    const during = await index.search(unit(0, 0, 1, 0), { limit: 1 });
    expect(during[0]?.id).toBe("gamma");
    expect(index.lastFallback).toMatch(/qdrant unreachable; used the embedded index/);

    // The next search finds Qdrant answering again: it is resynced, then serves.
    const after = await index.search(unit(0, 0, 1, 0), { limit: 1 });
    expect(resyncs).toBe(2);
    expect(after[0]?.id).toBe("gamma");
    expect(index.lastFallback).toBe("");
    expect(server.requestsTo("POST", /points\/query/).length).toBeGreaterThan(queriesBefore);
    expect([...(server.collections.get("fallback_test")?.points.values() ?? [])]).toHaveLength(3);
  });
});
