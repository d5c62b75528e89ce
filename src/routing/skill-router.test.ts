import { createHash } from "node:crypto";
import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Embedder } from "./embedding/index.js";
import { KeywordIndex, SqliteVecIndex } from "./index/index.js";
import { type RoutableSkill, type RouteScope, SkillRouter } from "./skill-router.js";

/** Bag-of-words vectors: texts that share words point the same way; no model needed. */
class WordEmbedder implements Embedder {
  readonly modelId = "test-words";
  readonly dimensions = 64;
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    return texts.map((text) => {
      const vector = new Float32Array(this.dimensions);
      for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
        const slot = createHash("sha256").update(word).digest().readUInt8(0) % this.dimensions;
        vector[slot] = (vector[slot] ?? 0) + 1;
      }
      const length = Math.hypot(...vector) || 1;
      return vector.map((v) => v / length);
    });
  }
}

const logger = pino({ level: "silent" });
const skill = (name: string, owner: string, visibility: "private" | "public", description = "convert celsius temperature to fahrenheit"): RoutableSkill => ({
  name,
  description,
  owner,
  visibility,
  status: "active",
});

describe("SkillRouter scoping (real SQLite: FTS5 and sqlite-vec)", () => {
  let db: Database.Database;
  let router: SkillRouter;
  beforeEach(async () => {
    db = new Database(":memory:");
    router = new SkillRouter({ db, embedder: new WordEmbedder(), vectors: new SqliteVecIndex(db, { logger }), keywords: new KeywordIndex(db, { logger }), logger });
    await router.init([]);
    for (const s of [
      skill("alice_private", "alice", "private"),
      skill("alice_public", "alice", "public"),
      skill("bob_private", "bob", "private"),
      skill("bob_public", "bob", "public"),
      skill("unrelated_public", "carol", "public", "send an email message to a recipient"),
    ]) {
      await router.index(s);
    }
  });
  afterEach(() => db.close());

  const names = async (scope: RouteScope, mode: "fused" | "keywords" | "vectors" = "fused") =>
    (await router.route("convert celsius to fahrenheit", { limit: 10, mode, scope })).hits.map((h) => h.name).sort();

  it("routes an agent to its own skills and the public ones, in every mode, each skill once", async () => {
    for (const mode of ["fused", "keywords", "vectors"] as const) {
      const hits = await names({ agentId: "alice", everything: false }, mode);
      expect({ mode, hits: hits.filter((n) => n !== "unrelated_public") }).toEqual({ mode, hits: ["alice_private", "alice_public", "bob_public"] });
      expect(new Set(hits).size).toBe(hits.length);
    }
    expect((await names({ agentId: "carol", everything: false })).filter((n) => n !== "unrelated_public")).toEqual(["alice_public", "bob_public"]);
  });

  it("routes an admin to every routable skill", async () => {
    expect((await names({ agentId: "ops", everything: true })).filter((n) => n !== "unrelated_public")).toEqual([
      "alice_private",
      "alice_public",
      "bob_private",
      "bob_public",
    ]);
  });

  it("lets only the agent a route was made for credit it", async () => {
    const route = await router.route("convert celsius to fahrenheit", { limit: 10, mode: "fused", scope: { agentId: "alice", everything: false } });
    const target = skill("bob_public", "bob", "public");
    expect(await router.credit(route.routeId, "bob_public", true, target, "bob")).toBe(false);
    expect(router.quality("bob_public").selections).toBe(0);
    expect(await router.credit(route.routeId, "bob_public", true, target, "alice")).toBe(true);
    expect(router.quality("bob_public")).toEqual({ selections: 1, completions: 1, failures: 0 });
  });
});
