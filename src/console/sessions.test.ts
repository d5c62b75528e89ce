import { describe, expect, it } from "vitest";
import { parseCookies, SessionStore, tokensMatch } from "./sessions.js";

describe("SessionStore", () => {
  it("expires idle sessions and keeps used ones", () => {
    let now = 0;
    const store = new SessionStore(1_000, 10, () => now);
    const kept = store.create("t1");
    const idle = store.create("t2");
    now = 900;
    expect(store.get(kept.id)?.token).toBe("t1");
    now = 1_500;
    expect(store.get(idle.id)).toBeUndefined();
    expect(store.get(kept.id)?.csrf).toBe(kept.csrf);
  });

  it("drops the least recently seen session past the limit", () => {
    let now = 0;
    const store = new SessionStore(10_000, 2, () => now);
    const a = store.create("a");
    const b = store.create("b");
    now = 1;
    store.get(a.id);
    store.create("c");
    expect(store.get(b.id)).toBeUndefined();
    expect(store.get(a.id)).toBeDefined();
  });
});

describe("tokensMatch and parseCookies", () => {
  it("compares tokens exactly", () => {
    expect(tokensMatch("abc", "abc")).toBe(true);
    expect(tokensMatch("abc", "abd")).toBe(false);
    expect(tokensMatch("abc", "ab")).toBe(false);
    expect(tokensMatch("abc", undefined)).toBe(false);
  });

  it("reads the first cookie of each name", () => {
    expect(parseCookies("a=1; b=2; a=3").get("a")).toBe("1");
    expect(parseCookies(undefined).size).toBe(0);
  });
});
