import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../errors/index.js";
import { ascending, type Listing, openPage, PAGE_SIZE } from "./page-token.js";

const SKILLS: Listing = { name: "ListSkills", keyShapes: ["s"] };
const NAMES = Array.from({ length: 25 }, (_, i) => `skill_${String(i).padStart(2, "0")}`);

/** Every page of NAMES through tokens, as a client follows them. */
function follow(listing: Listing, filters: Record<string, string | boolean>, pageSize: number): string[][] {
  const pages: string[][] = [];
  let token = "";
  do {
    const window = openPage<[string]>(listing, filters, { pageSize, pageToken: token });
    const page = window.slice(NAMES, (name) => [name]);
    pages.push(page.items);
    token = page.nextPageToken;
  } while (token !== "" && pages.length < 100);
  return pages;
}

describe("page sizes", () => {
  it("takes unset and 0 as the default, clamps above the maximum and refuses a negative size", () => {
    expect(openPage(SKILLS, {}, {}).size).toBe(PAGE_SIZE.default);
    expect(openPage(SKILLS, {}, { pageSize: 0 }).size).toBe(PAGE_SIZE.default);
    expect(openPage({ ...SKILLS, defaultSize: 50 }, {}, { pageSize: 0 }).size).toBe(50);
    expect(openPage(SKILLS, {}, { pageSize: 7 }).size).toBe(7);
    expect(openPage(SKILLS, {}, { pageSize: PAGE_SIZE.max + 1 }).size).toBe(PAGE_SIZE.max);
    expect(() => openPage(SKILLS, {}, { pageSize: -1 })).toThrow(InvalidArgumentError);
    expect(() => openPage(SKILLS, {}, { pageSize: -1 })).toThrow(/page_size: must be ≥ 0/);
  });
});

describe("page tokens", () => {
  it("walks a list in pages that together hold every item once, the last page without a token", () => {
    const pages = follow(SKILLS, { owner: "alice" }, 10);
    expect(pages.map((p) => p.length)).toEqual([10, 10, 5]);
    expect(pages.flat()).toEqual(NAMES);
  });

  it("answers a list that fits one page with no next token (no empty last page)", () => {
    expect(follow(SKILLS, {}, 25)).toEqual([NAMES]);
  });

  it("is opaque text (base64url) and the same for the same position and filters", () => {
    const first = openPage<[string]>(SKILLS, { a: true }, { pageSize: 3 }).slice(NAMES, (n) => [n]);
    expect(first.nextPageToken).toMatch(/^[A-Za-z0-9_-]+$/);
    const again = openPage<[string]>(SKILLS, { a: true }, { pageSize: 3 }).slice(NAMES, (n) => [n]);
    expect(again.nextPageToken).toBe(first.nextPageToken);
  });

  it("resumes after the cursor's key, so items added or removed before it neither repeat nor push others out", () => {
    const first = openPage<[string]>(SKILLS, {}, { pageSize: 5 }).slice(NAMES, (n) => [n]);
    // Between the pages: the first item is gone and an item sorting before the cursor arrived.
    const changed = ["skill_00a", ...NAMES.slice(1)].sort();
    const second = openPage<[string]>(SKILLS, {}, { pageSize: 5, pageToken: first.nextPageToken }).slice(changed, (n) => [n]);
    expect(second.items).toEqual(NAMES.slice(5, 10));
  });

  it("refuses a token reused with other filters, naming the filters", () => {
    const { nextPageToken } = openPage<[string]>(SKILLS, { includeInactive: false, owner: "" }, { pageSize: 5 }).slice(NAMES, (n) => [n]);
    expect(() => openPage(SKILLS, { includeInactive: true, owner: "" }, { pageToken: nextPageToken })).toThrow(
      /page_token: was issued for ListSkills with other filters \(include_inactive, owner\)/,
    );
    // The order of the filters and a filter left unset do not matter.
    expect(openPage(SKILLS, { owner: "", includeInactive: false, extra: undefined }, { pageToken: nextPageToken }).after).toEqual([
      NAMES[4],
    ]);
  });

  it("refuses a token of another listing, and text that is no token, with an actionable message", () => {
    const { nextPageToken } = openPage<[string]>(SKILLS, {}, { pageSize: 5 }).slice(NAMES, (n) => [n]);
    const versions: Listing = { name: "ListSkillVersions", keyShapes: ["n"] };
    expect(() => openPage(versions, {}, { pageToken: nextPageToken })).toThrow(
      /page_token: is not a page token of ListSkillVersions \(issued by ListSkills\)/,
    );
    for (const bad of ["not a token", "abc", "%%%", Buffer.from("[1,2]").toString("base64url"), "x".repeat(5_000)]) {
      expect(() => openPage(SKILLS, {}, { pageToken: bad })).toThrow(/page_token: .*leave page_token empty to start from the first page/);
    }
    const forged = (k: unknown[], v = 1): string => Buffer.from(JSON.stringify({ v, l: "ListSkills", f: "x", k })).toString("base64url");
    expect(() => openPage(SKILLS, {}, { pageToken: forged([1]) })).toThrow(/malformed/);
    expect(() => openPage(SKILLS, {}, { pageToken: forged(["a", "b"]) })).toThrow(/malformed/);
    expect(() => openPage(SKILLS, {}, { pageToken: forged(["a"], 2) })).toThrow(/another version/);
  });
});

describe("a listing that pins the walk's instant", () => {
  let now = 1_000;
  const PINNED: Listing = { name: "ListLessons", keyShapes: ["s"], version: 2, clock: () => now };

  it("reads the clock on the first page and carries that instant in every token of the walk", () => {
    now = 1_000;
    const first = openPage<[string]>(PINNED, {}, { pageSize: 5 });
    expect(first.asOf).toBe(1_000);
    const { nextPageToken } = first.slice(NAMES, (n) => [n]);
    now = 9_000;
    const second = openPage<[string]>(PINNED, {}, { pageSize: 5, pageToken: nextPageToken });
    expect(second.asOf).toBe(1_000);
    const third = openPage<[string]>(PINNED, {}, { pageSize: 5, pageToken: second.slice(NAMES, (n) => [n]).nextPageToken });
    expect(third.asOf).toBe(1_000);
    // A listing without a clock has no instant.
    expect(openPage(SKILLS, {}, {}).asOf).toBeUndefined();
  });

  it("refuses a token of the listing's older version, and one whose instant is missing or not a time", () => {
    const forged = (fields: Record<string, unknown>): string =>
      Buffer.from(JSON.stringify({ v: 2, l: "ListLessons", f: "x", k: ["a"], ...fields })).toString("base64url");
    expect(() => openPage(PINNED, {}, { pageToken: forged({ v: 1, t: 5 }) })).toThrow(/another version/);
    for (const t of [undefined, "5", -1, null]) expect(() => openPage(PINNED, {}, { pageToken: forged({ t }) })).toThrow(/malformed/);
    // An instant on a listing that keeps none is no token of it either.
    const skills = Buffer.from(JSON.stringify({ v: 1, l: "ListSkills", f: "x", k: ["a"], t: 5 })).toString("base64url");
    expect(() => openPage(SKILLS, {}, { pageToken: skills })).toThrow(/malformed/);
    // Another listing's token is named as such, whatever its version.
    expect(() => openPage(SKILLS, {}, { pageToken: forged({ t: 5 }) })).toThrow(/issued by ListLessons/);
  });
});

describe("ascending", () => {
  it("orders keys as ORDER BY over their components does", () => {
    expect(ascending(["b"], ["a"])).toBe(true);
    expect(ascending(["a"], ["a"])).toBe(false);
    expect(ascending(["a", 2], ["a", 1])).toBe(true);
    expect(ascending([1, "z"], [2, "a"])).toBe(false);
  });
});
