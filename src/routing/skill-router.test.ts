import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { KeywordIndex, SqliteVecIndex } from "../search/index.js";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import { documentText, type RoutableSkill, type RouteScope, SkillRouter } from "./skill-router.js";
import { migrateRegistry } from "../schema/index.js";

const logger = pino({ level: "silent" });
const skill = (
  name: string,
  owner: string,
  visibility: "private" | "public",
  description = "convert celsius temperature to fahrenheit",
): RoutableSkill => ({
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
    migrateRegistry(db);
    router = new SkillRouter({
      db,
      embedder: new WordEmbedder(),
      vectors: new SqliteVecIndex(db, { logger }),
      keywords: new KeywordIndex(db, { logger }),
      logger,
    });
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
      expect({ mode, hits: hits.filter((n) => n !== "unrelated_public") }).toEqual({
        mode,
        hits: ["alice_private", "alice_public", "bob_public"],
      });
      expect(new Set(hits).size).toBe(hits.length);
    }
    expect((await names({ agentId: "carol", everything: false })).filter((n) => n !== "unrelated_public")).toEqual([
      "alice_public",
      "bob_public",
    ]);
  });

  it("names the nearest skills an agent may see, whatever their status, each once", async () => {
    await router.index({ ...skill("alice_retired", "alice", "private"), status: "retired" });
    await router.index(skill("bob_public", "bob", "public"), ["turn celsius into fahrenheit"]);
    const [vector] = await new WordEmbedder().embed(["convert celsius temperature to fahrenheit"]);
    const nearest = await router.nearestSkills(vector as Float32Array, { agentId: "alice", everything: false }, 10);
    expect([...nearest].sort()).toEqual(["alice_private", "alice_public", "alice_retired", "bob_public", "unrelated_public"]);
    expect(nearest.at(-1)).toBe("unrelated_public");
    expect(await router.nearestSkills(vector as Float32Array, { agentId: "alice", everything: false }, 2)).toHaveLength(2);
    const admin = await router.nearestSkills(vector as Float32Array, { agentId: "ops", everything: true }, 10);
    expect(admin).toContain("bob_private");
  });

  it("searches each source once for an agent, as for an admin", async () => {
    const vectors = new SqliteVecIndex(db, { logger });
    const keywords = new KeywordIndex(db, { logger });
    const scoped = new SkillRouter({ db, embedder: new WordEmbedder(), vectors, keywords, logger });
    const vectorSearch = vi.spyOn(vectors, "search");
    const keywordSearch = vi.spyOn(keywords, "search");
    for (const scope of [
      { agentId: "alice", everything: false },
      { agentId: "ops", everything: true },
    ]) {
      vectorSearch.mockClear();
      keywordSearch.mockClear();
      const { hits } = await scoped.route("convert celsius to fahrenheit", { limit: 10, mode: "fused", scope });
      expect(hits.length).toBeGreaterThan(0);
      expect(vectorSearch).toHaveBeenCalledTimes(1);
      expect(keywordSearch).toHaveBeenCalledTimes(1);
    }
  });

  it("keeps an agent called public to its own private skills, and others away from them", async () => {
    await router.index(skill("public_private", "public", "private"));
    for (const mode of ["fused", "keywords", "vectors"] as const) {
      expect((await names({ agentId: "carol", everything: false }, mode)).filter((n) => n !== "unrelated_public")).toEqual([
        "alice_public",
        "bob_public",
      ]);
      expect((await names({ agentId: "public", everything: false }, mode)).filter((n) => n !== "unrelated_public")).toEqual([
        "alice_public",
        "bob_public",
        "public_private",
      ]);
    }
  });

  it("follows a change of visibility or owner at the next index", async () => {
    await router.index(skill("bob_private", "bob", "public"));
    expect(await names({ agentId: "carol", everything: false }, "keywords")).toContain("bob_private");
    expect(await names({ agentId: "carol", everything: false }, "vectors")).toContain("bob_private");
    await router.index(skill("bob_private", "carol", "private"));
    expect(await names({ agentId: "carol", everything: false })).toContain("bob_private");
    expect(await names({ agentId: "bob", everything: false })).not.toContain("bob_private");
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
    const route = await router.route("convert celsius to fahrenheit", {
      limit: 10,
      mode: "fused",
      scope: { agentId: "alice", everything: false },
    });
    const target = skill("bob_public", "bob", "public");
    expect(await router.credit(route.routeId, "bob_public", true, target, "bob")).toBe(false);
    expect(router.quality("bob_public").selections).toBe(0);
    expect(await router.credit(route.routeId, "bob_public", true, target, "alice")).toBe(true);
    expect(router.quality("bob_public")).toEqual({ selections: 1, completions: 1, failures: 0 });
  });
});

describe("SkillRouter upgrade from indexes without audience (layout 2)", () => {
  it("re-creates and re-indexes them at init, after which scoped routing finds own and public skills", async () => {
    const db = new Database(":memory:");
    migrateRegistry(db);
    const skills = [
      skill("alice_private", "alice", "private"),
      skill("alice_public", "alice", "public"),
      skill("bob_private", "bob", "private"),
      skill("bob_public", "bob", "public"),
    ];
    const first = new SkillRouter({
      db,
      embedder: new WordEmbedder(),
      vectors: new SqliteVecIndex(db, { logger }),
      keywords: new KeywordIndex(db, { logger }),
      logger,
    });
    await first.init(skills);
    // Turn what the first router wrote into what the previous version would have left behind.
    db.exec("ALTER TABLE skill_keywords_docs DROP COLUMN audience");
    const rows = db.prepare("SELECT skill_id, embedding, status, owner, visibility FROM skill_vectors").raw().all() as unknown[][];
    db.exec("DROP TABLE skill_vectors");
    db.exec(`CREATE VIRTUAL TABLE skill_vectors USING vec0(
               skill_id TEXT PRIMARY KEY, embedding float[64] distance_metric=cosine, status TEXT, owner TEXT, visibility TEXT)`);
    const insert = db.prepare("INSERT INTO skill_vectors (skill_id, embedding, status, owner, visibility) VALUES (?, ?, ?, ?, ?)");
    for (const row of rows) insert.run(...row);
    expect(rows).toHaveLength(skills.length);
    db.prepare("UPDATE routing_meta SET value = ? WHERE key = 'embedder'").run("test-words/64/layout-2");

    const vectors = new SqliteVecIndex(db, { logger });
    const keywords = new KeywordIndex(db, { logger });
    expect(keywords.count()).toBe(skills.length); // the column was added in place
    const router = new SkillRouter({ db, embedder: new WordEmbedder(), vectors, keywords, logger });
    await router.init(skills);
    expect(await vectors.count()).toBe(skills.length);
    const meta = db.prepare("SELECT value FROM routing_meta WHERE key = 'embedder'").get() as { value: string };
    expect(meta.value).toBe("test-words/64/layout-5");
    for (const mode of ["fused", "keywords", "vectors"] as const) {
      const { hits } = await router.route("convert celsius to fahrenheit", {
        limit: 10,
        mode,
        scope: { agentId: "alice", everything: false },
      });
      expect({ mode, names: hits.map((h) => h.name).sort() }).toEqual({ mode, names: ["alice_private", "alice_public", "bob_public"] });
    }
    db.close();
  });
});

describe("documentText", () => {
  it("embeds the name split as the keyword index splits it, then the description", () => {
    expect(documentText({ name: "PDF_URLTool", description: "Reads a PDF at a URL." })).toBe("pdf url tool: Reads a PDF at a URL.");
    expect(documentText({ name: "getWeatherForecast", description: "d" })).toBe("get weather forecast: d");
    expect(documentText({ name: "tmdb_get_movie_movie_id_credits", description: "d" })).toBe("tmdb get movie movie id credits: d");
  });
});
