import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { cacheStatements } from "./statement-cache.js";

describe("cacheStatements: a statement compiled once per text and connection", () => {
  it("hands out the same statement for the same text, and a fresh one while the first is being iterated", () => {
    const db = new Database(":memory:");
    cacheStatements(db);
    db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2), (3);");
    const sql = "SELECT x FROM t ORDER BY x";
    const first = db.prepare(sql);
    expect(db.prepare(sql)).toBe(first);

    const outer: number[] = [];
    const inner: number[] = [];
    for (const row of first.iterate() as IterableIterator<{ x: number }>) {
      outer.push(row.x);
      // The same text inside the iteration: the busy statement is not handed out again.
      const nested = db.prepare<[], { x: number }>(sql);
      expect(nested).not.toBe(first);
      inner.push(nested.all().length);
    }
    expect(outer).toEqual([1, 2, 3]);
    expect(inner).toEqual([3, 3, 3]);
    expect(db.prepare(sql)).toBe(first);
    db.close();
  });

  it("keeps at most its capacity, dropping the least recently used text", () => {
    const db = new Database(":memory:");
    cacheStatements(db, 2);
    const a = db.prepare("SELECT 1");
    const b = db.prepare("SELECT 2");
    expect(db.prepare("SELECT 1")).toBe(a);
    db.prepare("SELECT 3");
    expect(db.prepare("SELECT 1")).toBe(a);
    expect(db.prepare("SELECT 2")).not.toBe(b);
    db.close();
  });
});
