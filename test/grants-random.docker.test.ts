import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

/**
 * The access table (docs/security.md#the-access-table) checked on random skills and grants: what
 * each caller routes to (keywords, vectors, fused) and lists is compared with a direct computation.
 * Deterministic: a seeded generator, so a failure can be replayed.
 */
const AGENTS = ["a0", "a1", "a2", "a3", "a4"];
const USERS = ["u0", "u1", "u2"];
const TOPICS = ["zorblax", "quintavar", "mebbelon", "tressik", "vondrafel", "kaltomir", "prusselin", "gandowick"];
const SKILLS = 200;
const GRANTS = 300;
const token = (agent: string) => `${agent}-token-0123456789abcdef`;

const CODE = `import json, sys
print(json.dumps({"ok": True}))
`;

/** mulberry32: a small seeded generator. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Planned {
  readonly name: string;
  readonly owner: string;
  readonly topic: string;
  readonly public: boolean;
  readonly system: boolean;
  enabled: boolean;
  readonly grants: Array<{ kind: "agent" | "user"; id: string }>;
}

interface CallerView {
  readonly label: string;
  readonly agent: string;
  readonly user?: string;
  readonly admin: boolean;
}

/** The access table, computed directly. */
function visible(skill: Planned, caller: CallerView): boolean {
  return (
    caller.admin ||
    skill.owner === caller.agent ||
    skill.public ||
    skill.system ||
    skill.grants.some((g) => (g.kind === "agent" ? g.id === caller.agent : caller.user !== undefined && g.id === caller.user))
  );
}

describe("routing and listing equal the access table on random skills and grants (real server)", () => {
  const next = random(19);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  let engine: TestEngine;
  const clients = new Map<string, TestClient>();
  const planned: Planned[] = [];
  const callers: CallerView[] = [
    ...AGENTS.map((agent) => ({ label: agent, agent, admin: false })),
    { label: "desk", agent: "desk", admin: false },
    ...USERS.map((user) => ({ label: `desk+${user}`, agent: "desk", user, admin: false })),
    { label: "ops", agent: "ops", admin: true },
  ];

  beforeAll(async () => {
    const tokens = [...AGENTS.map((a) => `${a}=${token(a)}`), `desk:delegate=${token("desk")}`, `ops:admin=${token("ops")}`].join(",");
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: tokens, SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2", SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4" },
    });
    for (const caller of callers) {
      clients.set(caller.label, connect(engine.app.port, token(caller.agent), undefined, caller.user ? { "x-user-id": caller.user } : {}));
    }
    const clientOf = (agent: string) => clients.get(agent) as TestClient;

    for (let i = 0; i < SKILLS; i++) {
      const system = next() < 0.05;
      planned.push({
        name: `r_${String(i).padStart(3, "0")}`,
        owner: system ? "ops" : pick(AGENTS),
        topic: pick(TOPICS),
        public: !system && next() < 0.15,
        system,
        enabled: true,
        grants: [],
      });
    }
    // Registered eight at a time: each one's test run is a real sandbox run.
    for (let start = 0; start < planned.length; start += 8) {
      await Promise.all(
        planned.slice(start, start + 8).map((skill) =>
          clientOf(skill.owner).register(
            {
              name: skill.name,
              code: CODE,
              description: `The ${skill.topic} tool number ${skill.name.slice(2)}.`,
              visibility: skill.public ? Visibility.VISIBILITY_PUBLIC : Visibility.VISIBILITY_UNSPECIFIED,
              system: skill.system,
            },
            120_000,
          ),
        ),
      );
    }
    for (let g = 0; g < GRANTS; g++) {
      const skill = pick(planned.filter((s) => !s.system));
      const toUser = next() < 0.3;
      const grantee = toUser ? { kind: "user" as const, id: pick(USERS) } : { kind: "agent" as const, id: pick([...AGENTS, "desk"]) };
      if (grantee.kind === "agent" && grantee.id === skill.owner) continue;
      await clientOf(skill.owner).call(clientOf(skill.owner).raw.grantSkill, {
        name: skill.name,
        granteeAgent: grantee.kind === "agent" ? grantee.id : "",
        granteeUser: grantee.kind === "user" ? grantee.id : "",
        version: next() < 0.2 ? 1 : 0,
      });
      if (!skill.grants.some((x) => x.kind === grantee.kind && x.id === grantee.id)) skill.grants.push(grantee);
    }
    // Some revoked again (internal ones go back to private when the last goes), some switched off.
    for (const skill of planned.filter((s) => s.grants.length > 0 && next() < 0.2)) {
      const gone = skill.grants.pop() as { kind: "agent" | "user"; id: string };
      const owner = clientOf(skill.owner);
      await owner.call(owner.raw.revokeSkill, {
        name: skill.name,
        granteeAgent: gone.kind === "agent" ? gone.id : "",
        granteeUser: gone.kind === "user" ? gone.id : "",
      });
    }
    for (const skill of planned.filter(() => next() < 0.1)) {
      const owner = clientOf(skill.owner);
      await owner.call(owner.raw.setSkillEnabled, { name: skill.name, enabled: false });
      skill.enabled = false;
    }
  }, 900_000);
  afterAll(async () => {
    for (const client of clients.values()) client.close();
    await engine?.dispose();
  });

  const route = async (caller: CallerView, query: string, mode: RouteMode): Promise<string[]> => {
    const client = clients.get(caller.label) as TestClient;
    const response = await client.call(client.raw.routeSkills, {
      query,
      limit: 50,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode,
      minRelevance: 0,
    });
    return response.skills.map((s) => s.name).sort();
  };

  it("plans a mix worth checking", () => {
    expect(planned.filter((s) => s.system).length).toBeGreaterThan(3);
    expect(planned.filter((s) => s.public).length).toBeGreaterThan(10);
    expect(planned.reduce((n, s) => n + s.grants.length, 0)).toBeGreaterThan(150);
    expect(planned.filter((s) => s.grants.some((g) => g.kind === "user")).length).toBeGreaterThan(20);
    expect(planned.filter((s) => !s.enabled).length).toBeGreaterThan(5);
  });

  it("keyword routing of every topic returns exactly the routable skills the caller may see", async () => {
    for (const caller of callers) {
      for (const topic of TOPICS) {
        const expected = planned
          .filter((s) => s.topic === topic && s.enabled && visible(s, caller))
          .map((s) => s.name)
          .sort();
        expect({ caller: caller.label, topic, names: await route(caller, topic, RouteMode.ROUTE_MODE_KEYWORDS) }).toEqual({
          caller: caller.label,
          topic,
          names: expected,
        });
      }
    }
  }, 300_000);

  it("vector and fused routing return only visible skills, and as many as the limit allows (filters apply before the limit)", async () => {
    for (const caller of callers) {
      const routable = new Set(planned.filter((s) => s.enabled && visible(s, caller)).map((s) => s.name));
      for (const mode of [RouteMode.ROUTE_MODE_VECTORS, RouteMode.ROUTE_MODE_FUSED]) {
        const names = await route(caller, "a tool that does the zorblax thing", mode);
        expect({ caller: caller.label, mode, outside: names.filter((n) => !routable.has(n)) }).toEqual({
          caller: caller.label,
          mode,
          outside: [],
        });
        expect({ caller: caller.label, mode, count: names.length }).toEqual({
          caller: caller.label,
          mode,
          count: Math.min(50, routable.size),
        });
      }
    }
  }, 300_000);

  it("ListSkills and GetSkill answer the same table (disabled skills included: only routing and invocation stop)", async () => {
    for (const caller of callers) {
      const client = clients.get(caller.label) as TestClient;
      const expected = planned
        .filter((s) => visible(s, caller))
        .map((s) => s.name)
        .sort();
      expect({ caller: caller.label, names: (await client.list()).skills.map((s) => s.name).sort() }).toEqual({
        caller: caller.label,
        names: expected,
      });
      const hidden = planned.find((s) => !visible(s, caller));
      if (hidden) expect((await rpcError(client.get(hidden.name))).code).toBe(status.NOT_FOUND);
    }
  }, 120_000);
});
