import Database from "better-sqlite3";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeywordIndex, SqliteVecIndex } from "../search/index.js";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import { migrateRegistry } from "../schema/index.js";
import { evidenceVectorId, scoreWithEvidence } from "./route-evidence.js";
import { type RoutableSkill, SkillRouter } from "./skill-router.js";

const logger = pino({ level: "silent" });
const evidence = (name: string, i: number, score: number) => ({ id: evidenceVectorId(name, `h${i}`), score });
/** Main-vector hits of a catalog that mostly has nothing to do with the query. */
const unrelated = Array.from({ length: 30 }, (_, i) => ({ id: `other_${i}`, score: 0.1 + (i % 10) * 0.01 }));

describe("scoreWithEvidence", () => {
  it("reads an evidence hit against the query's other evidence hits, so a sibling request does not outrank the skill a query needs", () => {
    // Earlier requests all phrased alike ("Could you help me … 'example.jpg'"): every one is close to the query.
    const siblings = Array.from({ length: 20 }, (_, i) => evidence(`credited_${i}`, i, 0.6 + (i % 5) * 0.02));
    const hits = [{ id: "needed", score: 0.5 }, { id: "sibling", score: 0.25 }, evidence("sibling", 99, 0.72), ...siblings, ...unrelated];
    const scored = scoreWithEvidence(hits);
    expect(scored[0]).toEqual({ id: "needed", score: 0.5 });
    const sibling = scored.find((hit) => hit.id === "sibling")?.score ?? 0;
    expect(sibling).toBeGreaterThan(0.25); // it still counts, as far as it stands out
    expect(sibling).toBeLessThan(0.9 * 0.72);
  });

  it("lets a query that repeats a credited one find its skill, at no more than its cosine × 0.9", () => {
    // A description that stands out as far (0.45 among cosines near 0.15) is outranked by the repeat.
    const hits = [{ id: "described", score: 0.45 }, evidence("credited", 1, 0.98), evidence("other", 2, 0.2), ...unrelated];
    const scored = scoreWithEvidence(hits);
    expect(scored[0]?.id).toBe("credited");
    expect(scored[0]?.score).toBeLessThanOrEqual(0.9 * 0.98);

    expect(new Set(scored.map((hit) => hit.id)).size).toBe(scored.length); // each skill once
    expect(scored.map((hit) => hit.score)).toEqual([...scored.map((hit) => hit.score)].sort((a, b) => b - a));
  });

  it("gives a skill its main cosine when its evidence is weaker", () => {
    expect(scoreWithEvidence([{ id: "a", score: 0.4 }, evidence("a", 1, 0.3)])).toEqual([{ id: "a", score: 0.4 }]);
  });
});

describe("learning from use does not send a query to a skill credited for a sibling request (real SQLite: FTS5 and sqlite-vec)", () => {
  const skills: RoutableSkill[] = [
    ["book_car", "Book a rental car for a given date and place."],
    ["get_weather", "Get the weather for a specific city and a specific day."],
    ["order_taxi", "Order a taxi to a street address."],
    ["play_movie", "Play a movie by its title."],
    ["send_email", "Send an email message to a recipient."],
    ["make_video_call", "Start a video call with a phone number."],
    ["book_restaurant", "Reserve a table at a restaurant."],
    ["online_banking", "Transfer money between bank accounts."],
  ].map(([name, description]) => ({
    name: name as string,
    description: description as string,
    owner: "a",
    visibility: "public",
    status: "active",
  }));
  /** What users asked the skills that worked for them, each request set somewhere (a trip, a day, a place). */
  const credited: Array<[string, string]> = [
    ["get_weather", "I have a business trip planned for New York City on May 1 2023, could you tell me the weather forecast for that day"],
    ["get_weather", "what will the weather be like in Oslo tomorrow, do I need an umbrella"],
    ["order_taxi", "I have a busy day planned tomorrow, could you order a taxi to 123 Main St for me"],
    ["book_restaurant", "I have a date planned on Friday in New York City, could you reserve a table for two for that day"],
    ["make_video_call", "could you start a video call with my family at 1234567890 for me"],
    ["online_banking", "I have a trip planned, could you transfer 500 dollars to my savings account for that day"],
  ];
  let db: Database.Database;
  let router: SkillRouter;
  const scope = { agentId: "a", everything: false };
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
    await router.init(skills);
    for (const [name, query] of credited) {
      const route = await router.route(query, { limit: skills.length, mode: "fused", scope });
      expect(
        await router.credit(
          route.routeId,
          name,
          true,
          skills.find((s) => s.name === name),
          "a",
        ),
      ).toBe(true);
    }
  });
  afterEach(() => db.close());

  const top = async (query: string) => (await router.route(query, { limit: 3, mode: "fused", scope })).hits[0]?.name;

  it("routes a car rental on a business trip to book_car, not to the weather skill credited for another trip", async () => {
    expect(router.evidenceCount("get_weather")).toBe(2);
    expect(
      await top("I have a business trip planned for New York City on August 1 2023, could you arrange a car rental for that day"),
    ).toBe("book_car");
  });

  it("still routes a repeated request to the skill credited for it", async () => {
    expect(await top("what will the weather be like in Oslo tomorrow, do I need an umbrella")).toBe("get_weather");
    expect(await top("could you start a video call with my family at 1234567890 for me")).toBe("make_video_call");
  });
});
