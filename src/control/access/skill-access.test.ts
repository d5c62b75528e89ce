import { describe, expect, it } from "vitest";
import type { Caller } from "../../identity/index.js";
import type { SkillGrant } from "../registry/index.js";
import { canManage, canSee, grantFor, pinnedVersionFor, type SkillAccessView } from "./skill-access.js";

const agent = (agentId: string, userId?: string): Caller => ({ agentId, admin: false, authenticated: true, ...(userId ? { userId } : {}) });
const admin: Caller = { agentId: "ops", admin: true, authenticated: true };
const grant = (granteeKind: "agent" | "user", grantee: string, version?: number): SkillGrant => ({
  name: "s",
  granteeKind,
  grantee,
  version,
  grantedBy: "alice",
  grantedAt: new Date(0),
});
const skill = (extra: Partial<SkillAccessView> = {}): SkillAccessView & { system: boolean } => ({
  owner: "alice",
  visibility: "private",
  system: false,
  grants: [],
  ...extra,
});

describe("the access table (docs/security.md#the-access-table)", () => {
  it("private: owner and admins only", () => {
    expect(canSee(skill(), agent("alice"))).toBe(true);
    expect(canSee(skill(), admin)).toBe(true);
    expect(canSee(skill(), agent("bob"))).toBe(false);
    expect(canSee(skill(), agent("bob", "u1"))).toBe(false);
  });

  it("internal: the owner, admins, granted agents, and delegating agents acting for granted users", () => {
    const internal = skill({ visibility: "internal", grants: [grant("agent", "bob"), grant("user", "u1", 2)] });
    expect(canSee(internal, agent("bob"))).toBe(true);
    expect(canSee(internal, agent("carol"))).toBe(false);
    expect(canSee(internal, agent("carol", "u1"))).toBe(true);
    expect(canSee(internal, agent("carol", "u2"))).toBe(false);
    // A user id that equals an agent grantee's name grants nothing, nor the reverse.
    expect(canSee(skill({ grants: [grant("user", "bob")] }), agent("bob"))).toBe(false);
    expect(canSee(skill({ grants: [grant("agent", "u1")] }), agent("carol", "u1"))).toBe(false);
  });

  it("public and system: everyone", () => {
    expect(canSee(skill({ visibility: "public" }), agent("zed"))).toBe(true);
    expect(canSee(skill({ system: true }), agent("zed"))).toBe(true);
  });

  it("changes: the owner and admins; a system skill admins only", () => {
    expect(canManage(skill(), agent("alice"))).toBe(true);
    expect(canManage(skill(), agent("bob"))).toBe(false);
    expect(canManage(skill({ grants: [grant("agent", "bob")] }), agent("bob"))).toBe(false);
    expect(canManage(skill({ system: true }), agent("alice"))).toBe(false);
    expect(canManage(skill({ system: true }), admin)).toBe(true);
  });

  it("pins: the agent's own grant first, then its user's; owners and admins follow the active version", () => {
    const pinned = skill({ grants: [grant("user", "u1", 2), grant("agent", "bob", 1)] });
    expect(pinnedVersionFor(pinned, agent("bob", "u1"))).toBe(1);
    expect(pinnedVersionFor(pinned, agent("carol", "u1"))).toBe(2);
    expect(pinnedVersionFor(pinned, agent("carol"))).toBeUndefined();
    expect(pinnedVersionFor(pinned, agent("alice"))).toBeUndefined();
    expect(pinnedVersionFor(pinned, admin)).toBeUndefined();
    expect(grantFor(skill({ grants: [grant("agent", "bob")] }), agent("bob"))?.version).toBeUndefined();
  });
});
