import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../errors/index.js";
import { SEARCH_QUERY_LIMITS, searchedQuery } from "./long-query.js";

describe("searchedQuery (docs/routing.md#long-queries)", () => {
  it("searches a query of up to 2,000 characters whole, without a warning", () => {
    const query = "word ".repeat(400).trim();
    expect(searchedQuery(query)).toEqual({ pieces: [query], text: query, warning: undefined });
  });

  it("searches a longer one on its first and last 1,000 characters, in whole-word pieces of at most 500", () => {
    const words = Array.from({ length: 3_000 }, (_, i) => `w${i}`);
    const query = words.join(" ");
    const searched = searchedQuery(query);
    for (const piece of searched.pieces) {
      expect(piece.length).toBeLessThanOrEqual(SEARCH_QUERY_LIMITS.pieceChars);
      // Every piece is made of whole words of the query, in order.
      expect(query).toContain(piece);
      expect(piece.split(" ").every((word) => words.includes(word))).toBe(true);
    }
    expect(searched.pieces[0]?.startsWith("w0 w1 ")).toBe(true);
    expect(searched.pieces.at(-1)?.endsWith(" w2998 w2999")).toBe(true);
    expect(searched.text).toBe(searched.pieces.join("\n"));
    expect(searched.text.length).toBeLessThanOrEqual(SEARCH_QUERY_LIMITS.searchedChars + searched.pieces.length);
    expect(searched.text).not.toContain("w1500");
    expect(searched.warning).toMatch(
      new RegExp(
        `^query is ${query.length} characters, more than the 2000 searched whole: searched on its first \\d+ and last \\d+ characters`,
      ),
    );
  });

  it("cuts text without whitespace at the budget, never inside a surrogate pair", () => {
    // Two code units each, shifted by one so that every even cut falls inside a pair.
    const query = `a${"😀".repeat(3_000)}b`;
    const searched = searchedQuery(query);
    for (const piece of searched.pieces) {
      expect(piece.length).toBeLessThanOrEqual(SEARCH_QUERY_LIMITS.pieceChars);
      // No lone surrogate: encoding to UTF-8 and back changes nothing.
      expect(Buffer.from(piece, "utf8").toString("utf8")).toBe(piece);
    }
  });

  it("refuses a query over 32,000 characters, naming the field and the limit", () => {
    expect(() => searchedQuery("x".repeat(32_000))).not.toThrow();
    const refused = (() => {
      try {
        searchedQuery("x".repeat(32_001), "query");
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(refused).toBeInstanceOf(InvalidArgumentError);
    expect((refused as Error).message).toBe("query: is 32001 characters; the limit is 32000");
  });
});
