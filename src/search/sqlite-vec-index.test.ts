import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import * as sqliteVec from "sqlite-vec";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteVecIndex } from "./sqlite-vec-index.js";
import { unit, vectorIndexContract } from "./vector-index.contract.js";
import { audienceOf, PUBLIC_AUDIENCE, SKILL_PAYLOAD_TYPE } from "./vector-index.js";

vectorIndexContract("sqlite-vec (in-memory database)", async () => {
  const db = new Database(":memory:");
  return {
    index: new SqliteVecIndex(db),
    dispose: async () => {
      db.close();
    },
  };
});

// The approximate path (docs/routing.md#approximate-search) from the first entry: the same contract.
vectorIndexContract("sqlite-vec, approximate path (in-memory database)", async () => {
  const db = new Database(":memory:");
  return {
    index: new SqliteVecIndex(db, { approximateFrom: 0 }),
    dispose: async () => {
      db.close();
    },
  };
});

describe("SqliteVecIndex", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "sqlite-vec-index-"));
    dirs.push(dir);
    return join(dir, "registry.db");
  }

  const payload = (name: string) => ({ type: SKILL_PAYLOAD_TYPE, name, owner: "alice", visibility: "public", status: "active" }) as const;

  it("loads the extension shipped in the npm package", () => {
    const db = new Database(":memory:");
    new SqliteVecIndex(db);
    const row = db.prepare("SELECT vec_version() AS version").get() as { version: string };
    expect(row.version).toMatch(/^v0\.\d+\.\d+/);
    db.close();
  });

  it("survives a restart: a reopened file keeps vectors and dimensions without ensure", async () => {
    const file = tempFile();
    const first = new Database(file);
    first.pragma("journal_mode = WAL");
    const index = new SqliteVecIndex(first);
    await index.ensure(3);
    await index.upsert([{ id: "kept", vector: unit([1, 2, 3]), payload: payload("kept") }]);
    first.close();

    const second = new Database(file);
    const reopened = new SqliteVecIndex(second);
    expect(reopened.dimensions).toBe(3);
    expect(await reopened.count()).toBe(1);
    expect((await reopened.search(unit([1, 2, 3]), { limit: 1 }))[0]?.id).toBe("kept");
    second.close();
  });

  it("drops every shadow table when the dimensions change, and leaves other tables alone", async () => {
    const db = new Database(":memory:");
    db.exec("CREATE TABLE skills (name TEXT PRIMARY KEY)");
    const index = new SqliteVecIndex(db, { table: "routing_vectors" });
    await index.ensure(4);
    await index.upsert([{ id: "a", vector: unit([1, 0, 0, 0]), payload: payload("a") }]);
    const tablesAt4 = tableNames(db);
    await index.ensure(8);
    expect(tableNames(db)).toEqual(tablesAt4);
    expect(tableNames(db)).toContain("skills");
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'routing_vectors'").get() as { sql: string }).sql;
    expect(sql).toContain("float[8]");
    expect(sql).toContain("distance_metric=cosine");
    expect(await index.count()).toBe(0);
    db.close();
  });

  it("re-creates a table from before the audience column, which is then searchable by audience", async () => {
    const file = tempFile();
    const old = new Database(file);
    sqliteVec.load(old);
    old.exec("CREATE TABLE skills (name TEXT PRIMARY KEY)");
    // The layout the previous version created (no audience), with a row in it.
    old.exec(
      `CREATE VIRTUAL TABLE skill_vectors USING vec0(
         skill_id TEXT PRIMARY KEY,
         embedding float[3] distance_metric=cosine,
         status TEXT,
         owner TEXT,
         visibility TEXT
       )`,
    );
    old
      .prepare("INSERT INTO skill_vectors (skill_id, embedding, status, owner, visibility) VALUES (?, ?, ?, ?, ?)")
      .run("old", Buffer.from(unit([1, 0, 0]).buffer), "active", "alice", "private");
    old.close();

    const db = new Database(file);
    const index = new SqliteVecIndex(db);
    // Not the current layout: as if there were no index yet, until ensure re-creates it.
    expect(index.dimensions).toBeUndefined();
    await expect(index.count()).rejects.toMatchObject({ message: expect.stringContaining("ensure") });
    await index.ensure(3);
    expect(index.dimensions).toBe(3);
    expect(await index.count()).toBe(0); // the router re-indexes every skill (INDEX_LAYOUT)
    const sql = (db.prepare("SELECT sql FROM sqlite_master WHERE name = 'skill_vectors'").get() as { sql: string }).sql;
    expect(sql).toMatch(/audience TEXT/);
    expect(tableNames(db)).toContain("skills");
    await index.upsert([
      { id: "old", vector: unit([1, 0, 0]), payload: { ...payload("old"), visibility: "private" } },
      { id: "bobs", vector: unit([1, 0.1, 0]), payload: { ...payload("bobs"), owner: "bob", visibility: "private" } },
      { id: "shared", vector: unit([1, 0.2, 0]), payload: { ...payload("shared"), owner: "bob" } },
    ]);
    const filter = { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, audienceOf("alice", "private")] };
    expect((await index.search(unit([1, 0, 0]), { limit: 5, filter })).map((hit) => hit.id)).toEqual(["old", "shared"]);
    await index.ensure(3); // current now: kept
    expect(await index.count()).toBe(3);
    db.close();

    const again = new Database(file);
    const reopened = new SqliteVecIndex(again);
    expect(reopened.dimensions).toBe(3);
    expect((await reopened.search(unit([1, 0, 0]), { limit: 5, filter })).map((hit) => hit.id)).toEqual(["old", "shared"]);
    again.close();
  });

  it("refuses to work before ensure", async () => {
    const index = new SqliteVecIndex(new Database(":memory:"));
    await expect(index.count()).rejects.toMatchObject({ message: expect.stringContaining("ensure") });
  });

  it("refuses table names that would be SQL", () => {
    expect(() => new SqliteVecIndex(new Database(":memory:"), { table: "x; DROP TABLE skills" })).toThrow(/table name/);
  });

  it("caps limit at sqlite-vec's maximum k instead of failing", async () => {
    const index = new SqliteVecIndex(new Database(":memory:"));
    await index.ensure(2);
    await index.upsert([{ id: "a", vector: unit([1, 0]), payload: payload("a") }]);
    expect(await index.search(unit([1, 0]), { limit: 1_000_000 })).toHaveLength(1);
  });
});

function tableNames(db: Database.Database): string[] {
  return (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>).map(
    (row) => row.name,
  );
}
