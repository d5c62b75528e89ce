import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SkillRecord } from "../control/index.js";
import type { Caller } from "../identity/index.js";
import { migrateRegistry } from "../schema/index.js";
import { KeywordIndex, SqliteVecIndex } from "../search/index.js";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import { RegistrationGate } from "./registration-gate.js";
import { type RoutableSkill, SkillRouter } from "./skill-router.js";

const logger = pino({ level: "silent" });
const alice: Caller = { agentId: "alice", admin: false, authenticated: true };
const skill = (name: string, description: string, owner = "alice"): RoutableSkill => ({
  name,
  description,
  owner,
  visibility: "public",
  status: "active",
});

/**
 * The routing gate over real SQLite indexes (FTS5, sqlite-vec) with a bag-of-words embedder: its
 * ranks are the router's, each query counts as nobody's evidence, and it leaves the indexes as
 * they were (docs/routing.md#the-routing-gate).
 */
describe("RegistrationGate", () => {
  let db: Database.Database;
  let router: SkillRouter;
  let gate: RegistrationGate;
  let keywords: KeywordIndex;
  const records = new Map<string, SkillRecord>();

  beforeEach(async () => {
    db = new Database(":memory:");
    migrateRegistry(db);
    const embedder = new WordEmbedder();
    const vectors = new SqliteVecIndex(db, { logger });
    keywords = new KeywordIndex(db, { logger });
    router = new SkillRouter({ db, embedder, vectors, keywords, logger });
    await router.init([]);
    records.clear();
    const registry = {
      get: (name: string) => records.get(name),
    };
    gate = new RegistrationGate({ db, embedder, vectors, keywords, registry, logger });
  });
  afterEach(() => db.close());

  const add = async (s: RoutableSkill, examples: string[] = []): Promise<void> => {
    records.set(s.name, { ...s, enabled: true, system: false, grants: [] } as unknown as SkillRecord);
    await router.index(s, examples);
  };

  it("ranks the new skill where a route would rank it once indexed, with the same skills above it", async () => {
    await add(skill("celsius_to_fahrenheit", "convert a temperature from celsius to fahrenheit"));
    await add(skill("km_to_miles", "convert a distance in kilometres to miles"));
    await add(skill("send_email", "send an email message to a recipient"));
    const query = "convert a temperature reading to kelvin";
    const report = await gate.report({ name: "to_kelvin", description: "temperature in kelvin from celsius" }, [query], alice);

    await add(skill("to_kelvin", "temperature in kelvin from celsius", "alice"));
    const routed = await router.route(query, { limit: 50, mode: "fused", scope: { agentId: "alice", everything: false } });
    const names = routed.hits.map((h) => h.name);
    const [example] = report.examples;
    expect(example?.rank).toBe(names.indexOf("to_kelvin") + 1);
    expect(example?.outrankedBy).toEqual(names.slice(0, names.indexOf("to_kelvin")));
    expect(example?.relevance).toBeCloseTo(routed.hits.find((h) => h.name === "to_kelvin")?.relevance ?? -1, 6);
  });

  it("does not count an example as evidence for itself: a skill whose description misses its example is not found", async () => {
    for (let i = 0; i < 6; i++) await add(skill(`weather_${i}`, `will it rain in Oslo tomorrow: forecast number ${i}`));
    for (const other of [
      "send an email message",
      "book a hotel room",
      "play a song",
      "translate a sentence",
      "resize an image",
      "count words",
      "convert currencies",
    ]) {
      await add(skill(other.replaceAll(" ", "_"), other));
    }
    const report = await gate.report({ name: "zq_tool", description: "handles zq operations" }, ["will it rain in Oslo tomorrow"], alice);
    expect(report.examples.map((e) => e.found)).toEqual([false]);
    expect(report.examples[0]?.rank).toBeGreaterThan(5);
    expect(report.examples[0]?.outrankedBy.length).toBe(5);
    expect(report.warnings[0]).toMatch(/^not found by its example query "will it rain in Oslo tomorrow": ranks \d+, below weather_/);

    const found = await gate.report({ name: "jokes", description: "tell a funny joke" }, ["tell me a joke"], alice);
    expect(found.examples[0]).toMatchObject({ rank: 1, found: true, outrankedBy: [] });
    expect(found.warnings).toEqual([]);
  });

  it("reports the queries of a competitor it would now outrank, and shows them only to their owner", async () => {
    await add(skill("currency_convert", "convert money between currencies", "bob"), ["how many yen is fifty euros"]);
    await add(skill("send_email", "send an email message to a recipient", "bob"));
    const candidate = { name: "yen_rates", description: "how many yen for euros: the yen exchange rate of euros" };
    const report = await gate.report(candidate, ["exchange rate of yen"], alice);
    expect(report.shadowed).toEqual([{ skill: "currency_convert", query: undefined, rank: 1, skillRank: expect.any(Number) as number }]);
    expect(report.shadowed[0]?.skillRank).toBeGreaterThan(1);
    expect(report.warnings).toContain("would shadow currency_convert: ranks above it for 1 of its queries");

    const asOwner = await gate.report(candidate, ["exchange rate of yen"], { agentId: "bob", admin: false, authenticated: true });
    expect(asOwner.shadowed[0]?.query).toBe("how many yen is fifty euros");
  });

  it("leaves the indexes as they were", async () => {
    await add(skill("currency_convert", "convert money between currencies"), ["how many yen is fifty euros"]);
    const before = keywords.search("how many yen is fifty euros", { limit: 10 });
    const evidence = keywords.evidence("currency_convert");
    await gate.report({ name: "yen_rates", description: "yen exchange rate" }, ["how many yen is fifty euros"], alice);
    expect(keywords.count()).toBe(1);
    expect(keywords.evidence("currency_convert")).toEqual(evidence);
    expect(keywords.search("how many yen is fifty euros", { limit: 10 })).toEqual(before);
    expect(db.inTransaction).toBe(false);
  });

  it("reports nothing without example queries", async () => {
    expect(await gate.report({ name: "x", description: "y" }, ["  "], alice)).toEqual({
      examples: [],
      shadowed: [],
      warnings: [],
      degraded: [],
    });
  });
});
