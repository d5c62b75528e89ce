import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { MAX_QUERY_TERMS, toFtsMatchQuery } from "./fts-query.js";

describe("toFtsMatchQuery", () => {
  it("quotes every word and ORs them", () => {
    expect(toFtsMatchQuery("movie credits")).toBe('"movie" OR "credits"');
  });

  it("drops stop words, unless they are all there is", () => {
    expect(toFtsMatchQuery("what are the credits of this movie")).toBe('"credits" OR "movie"');
    expect(toFtsMatchQuery("to be or not")).toBe('"to" OR "be" OR "or" OR "not"');
  });

  it("turns FTS5 operators and punctuation into plain words or nothing", () => {
    expect(toFtsMatchQuery('NEAR(a b) "x" mov* -y ^z col:w')).toBe('"near" OR "b" OR "x" OR "mov" OR "y" OR "z" OR "col" OR "w"');
    expect(toFtsMatchQuery("*** () -- ")).toBeUndefined();
    expect(toFtsMatchQuery("")).toBeUndefined();
  });

  it("deduplicates and caps the number of terms", () => {
    expect(toFtsMatchQuery("movie Movie MOVIE")).toBe('"movie"');
    const many = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    expect(toFtsMatchQuery(many)?.split(" OR ")).toHaveLength(MAX_QUERY_TERMS);
  });

  it("produces expressions FTS5 always accepts", () => {
    const db = new Database(":memory:");
    db.exec("CREATE VIRTUAL TABLE t USING fts5(a, tokenize = 'porter unicode61 remove_diacritics 2')");
    db.prepare("INSERT INTO t (a) VALUES (?)").run("anything at all");
    const hostile = ['"', 'a"b', "AND OR NOT", "NEAR/2", "(a", "a)", "{a b}:c", "\u0301", "e\u0301t\u0301e\u0301", "🎬", "\u0000x"];
    for (const text of hostile) {
      const match = toFtsMatchQuery(text);
      if (match !== undefined) expect(() => db.prepare("SELECT * FROM t WHERE t MATCH ?").all(match)).not.toThrow();
    }
    db.close();
  });
});
