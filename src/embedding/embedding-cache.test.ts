import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Embedder } from "./embedder.js";
import { CachedEmbedder, textHash } from "./embedding-cache.js";
import { EmbeddingsTestServer } from "../../test/support/embeddings-test-server.js";
import { OpenAiEmbedder } from "./openai-embedder.js";
import { SqliteEmbeddingStore } from "./sqlite-embedding-store.js";
import { toUnitVector } from "./unit-vector.js";
import { migrateRegistry } from "../schema/index.js";

describe("CachedEmbedder over SqliteEmbeddingStore (real SQLite file, real HTTP backend)", () => {
  let server: EmbeddingsTestServer;
  let root: string;
  let dbPath: string;
  let db: Database.Database;

  beforeAll(async () => {
    server = await EmbeddingsTestServer.start();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "embedding-cache-test-"));
    dbPath = path.join(root, "registry.db");
    db = new Database(dbPath);
    db.pragma("journal_mode = WAL");
    migrateRegistry(db);
    server.requests.length = 0;
    server.dimensions = 8;
  });
  afterEach(async () => {
    db.close();
    await rm(root, { recursive: true, force: true });
  });

  const backend = (model = "m1", dimensions = 8) =>
    new OpenAiEmbedder({ baseUrl: server.baseUrl, model, dimensions, timeoutMs: 5_000, batchSize: 2 });
  const cached = (model = "m1", dimensions = 8) => new CachedEmbedder(backend(model, dimensions), new SqliteEmbeddingStore(db));
  const expected = (model: string, text: string) => Array.from(toUnitVector(server.rawVector(model, text))!);
  /** Texts the backend was asked for, over all requests since the last reset. */
  const asked = () => server.requests.flatMap((r) => r.input);

  it("embeds each distinct miss once, in one embed call, and serves hits without the backend", async () => {
    const calls: string[][] = [];
    const inner = backend();
    const counting: Embedder = {
      modelId: inner.modelId,
      dimensions: inner.dimensions,
      embed: (texts) => {
        calls.push([...texts]);
        return inner.embed(texts);
      },
    };
    const embedder = new CachedEmbedder(counting, new SqliteEmbeddingStore(db));
    const first = await embedder.embed(["a", "b", "a", "c"]);
    expect(calls).toEqual([["a", "b", "c"]]);
    // batchSize 2 splits that one call into two requests; every distinct miss is asked for once.
    expect(server.requests).toHaveLength(2);
    expect(asked()).toEqual(["a", "b", "c"]);
    expect(first.map((v) => Array.from(v))).toEqual(["a", "b", "a", "c"].map((t) => expected("m1", t)));

    server.requests.length = 0;
    const again = await embedder.embed(["c", "a", "b"]);
    expect(server.requests).toHaveLength(0);
    expect(again.map((v) => Array.from(v))).toEqual(["c", "a", "b"].map((t) => expected("m1", t)));

    const mixed = await embedder.embed(["a", "new", "b", "newer"]);
    expect(calls).toEqual([
      ["a", "b", "c"],
      ["new", "newer"],
    ]);
    expect(mixed.map((v) => Array.from(v))).toEqual(["a", "new", "b", "newer"].map((t) => expected("m1", t)));
    expect(await embedder.embed([])).toEqual([]);
  });

  it("keys on the exact text: whitespace and case are different texts", async () => {
    await cached().embed(["Hello", "hello", "hello "]);
    expect(asked()).toEqual(["Hello", "hello", "hello "]);
    expect(textHash("hello")).toBe("2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  });

  it("never returns another model's vectors, and keeps each model's own", async () => {
    await cached("m1").embed(["a", "b"]);
    server.requests.length = 0;

    const other = await cached("m2").embed(["a", "b"]);
    expect(server.requests.map((r) => r.model)).toEqual(["m2"]);
    expect(other.map((v) => Array.from(v))).toEqual(["a", "b"].map((t) => expected("m2", t)));

    server.requests.length = 0;
    await cached("m1").embed(["a", "b"]);
    await cached("m2").embed(["a", "b"]);
    expect(server.requests).toHaveLength(0);
  });

  it("treats a stored vector of another length as a miss and replaces it", async () => {
    await cached("m1", 8).embed(["a"]);
    server.requests.length = 0;
    server.dimensions = 16; // same model name, resized (e.g. a `dimensions` setting changed)

    const [resized] = await cached("m1", 16).embed(["a"]);
    expect(asked()).toEqual(["a"]);
    expect(resized).toHaveLength(16);

    server.requests.length = 0;
    expect((await cached("m1", 16).embed(["a"]))[0]).toHaveLength(16);
    expect(server.requests).toHaveLength(0);
  });

  it("survives closing and reopening the database file", async () => {
    await cached().embed(["persisted", "too"]);
    db.close();
    db = new Database(dbPath);
    server.requests.length = 0;

    const vectors = await cached().embed(["too", "persisted"]);
    expect(server.requests).toHaveLength(0);
    expect(vectors.map((v) => Array.from(v))).toEqual(["too", "persisted"].map((t) => expected("m1", t)));
    const row = db
      .prepare("SELECT dimensions, length(vector) AS bytes, created_at FROM embedding_cache WHERE text_hash = ?")
      .get(textHash("too"));
    expect(row).toMatchObject({ dimensions: 8, bytes: 32 });
  });

  it("creates a STRICT table once and re-embeds a damaged row", async () => {
    new SqliteEmbeddingStore(db);
    new SqliteEmbeddingStore(db);
    const ddl = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'embedding_cache'").pluck().get() as string;
    expect(ddl).toMatch(/STRICT$/);
    expect(() => db.prepare("INSERT INTO embedding_cache VALUES ('m', 'h', 'eight', x'00', 0)").run()).toThrow(
      /cannot store TEXT value in INTEGER column/,
    );

    await cached().embed(["a"]);
    db.prepare("UPDATE embedding_cache SET vector = x'0000' WHERE text_hash = ?").run(textHash("a"));
    server.requests.length = 0;
    const [vector] = await cached().embed(["a"]);
    expect(asked()).toEqual(["a"]);
    expect(Array.from(vector!)).toEqual(expected("m1", "a"));
  });

  it("drops the vectors of models no longer in use", async () => {
    await cached("m1").embed(["a", "b"]);
    await cached("m2").embed(["a"]);
    expect(new SqliteEmbeddingStore(db).retainOnly("openai:m2")).toBe(2);
    expect(db.prepare("SELECT model_id FROM embedding_cache").pluck().all()).toEqual(["openai:m2"]);
  });
});
