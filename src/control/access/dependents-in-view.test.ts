import { describe, expect, it } from "vitest";
import type { Caller } from "../../identity/index.js";
import { dependentCount, dependentsInView, describeDependents } from "./dependents-in-view.js";
import type { SkillAccessView } from "./skill-access.js";

const agent = (agentId: string): Caller => ({ agentId, admin: false, authenticated: true });
const dependent = (name: string, owner: string, visibility: SkillAccessView["visibility"]) => ({
  name,
  owner,
  visibility,
  system: false,
  grants: [],
});
const dependents = [
  dependent("alice_private", "alice", "private"),
  dependent("carol_public", "carol", "public"),
  dependent("bob_own", "bob", "private"),
  dependent("alice_internal", "alice", "internal"),
];

describe("dependents as one caller may learn of them (docs/security.md#dependents-you-cannot-see)", () => {
  it("names the ones the caller may see and counts the others", () => {
    const view = dependentsInView(dependents, agent("bob"));
    expect(view).toEqual({ named: ["carol_public", "bob_own"], hidden: 2 });
    expect(dependentCount(view)).toBe(4);
    expect(describeDependents(view)).toBe("carol_public, bob_own and 2 skills you cannot see");
  });

  it("names every dependent to an admin", () => {
    const view = dependentsInView(dependents, { agentId: "ops", admin: true, authenticated: true });
    expect(view.hidden).toBe(0);
    expect(describeDependents(view)).toBe("alice_private, carol_public, bob_own, alice_internal");
  });

  it("says one hidden skill in the singular, and nothing but the count when none is visible", () => {
    expect(describeDependents(dependentsInView([dependents[0]!], agent("bob")))).toBe("1 skill you cannot see");
    expect(describeDependents({ named: [], hidden: 3 })).toBe("3 skills you cannot see");
  });
});
