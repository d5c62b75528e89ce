import { describe, expect, it } from "vitest";
import { AGENT_ID_PATTERN } from "../identity/index.js";
import { audienceOf, filterMatchesNothing, PUBLIC_AUDIENCE } from "./vector-index.js";

describe("audienceOf", () => {
  it("is PUBLIC_AUDIENCE for every public skill, whoever owns it", () => {
    expect(audienceOf("alice", "public")).toBe(PUBLIC_AUDIENCE);
    expect(audienceOf("bob", "public")).toBe(PUBLIC_AUDIENCE);
    expect(audienceOf("public", "public")).toBe(PUBLIC_AUDIENCE);
  });

  it("is the owner's own, stable value for a private skill, never a public one", () => {
    expect(audienceOf("alice", "private")).toBe(audienceOf("alice", "private"));
    expect(audienceOf("alice", "private")).not.toBe(audienceOf("bob", "private"));
    expect(audienceOf("Alice", "private")).not.toBe(audienceOf("alice", "private"));
    // "public" is a valid agent id; its private skills are still only its own.
    expect(AGENT_ID_PATTERN.test("public")).toBe(true);
    expect(audienceOf("public", "private")).not.toBe(PUBLIC_AUDIENCE);
    // Anything but "public" is private: an unknown visibility never widens to everyone.
    expect(audienceOf("alice", "internal")).toBe(audienceOf("alice", "private"));
  });

  it("fits sqlite-vec's 12 inline bytes whatever the owner's length, and cannot be an agent id", () => {
    for (const owner of ["a", "alice", "research-assistant-07", "x".repeat(64)]) {
      const audience = audienceOf(owner, "private");
      expect(audience).toMatch(/^~[A-Za-z0-9_-]{11}$/);
      expect(Buffer.byteLength(audience)).toBe(12);
      expect(AGENT_ID_PATTERN.test(audience)).toBe(false);
    }
  });
});

describe("filterMatchesNothing", () => {
  it("is true when any allowlist, audiences included, is empty", () => {
    expect(filterMatchesNothing(undefined)).toBe(false);
    expect(filterMatchesNothing({ audiences: [PUBLIC_AUDIENCE] })).toBe(false);
    expect(filterMatchesNothing({ audiences: [] })).toBe(true);
    expect(filterMatchesNothing({ statuses: ["active"], audiences: [] })).toBe(true);
  });
});
