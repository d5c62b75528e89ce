import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctl } from "./support/skillctl.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const echo = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";
const CATALOG = [
  { name: "weather_forecast", description: "Get the weather forecast (temperature, rain, wind) for a city for the next days." },
  { name: "rain_radar", description: "Show where it is raining now and where rain is heading in the next hours." },
  { name: "wind_speed", description: "Current wind speed and gusts at a place, for sailing and cycling." },
  { name: "uv_index", description: "Today's UV index and sunburn risk for a city." },
  { name: "air_quality", description: "Air quality and pollen levels in a city today." },
  { name: "sunrise_times", description: "Sunrise and sunset times for a city and a date." },
  {
    name: "currency_convert",
    description: "Convert an amount of money from one currency to another at today's exchange rate.",
    examples: ["how many yen is 50 euros", "what is 100 dollars in pounds"],
  },
];

/**
 * RegisterSkill's routing gate through the real server and the default encoder
 * (docs/routing.md#the-routing-gate): the rank of the new skill for each of its example queries,
 * the skills above it, a warning when its own examples do not find it, and the queries of another
 * skill it would take.
 */
describe("RegisterSkill: the routing gate's report", () => {
  let engine: TestEngine;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "registration-gate-"));
    // The floor is the service's: 0 keeps "found" about rank alone, whatever the default becomes.
    engine = await startTestEngine({ env: { SKILL_ENGINE_ROUTE_MIN_RELEVANCE: "0" } });
    for (const tool of CATALOG) {
      const response = await engine.client.register(
        { name: tool.name, description: tool.description, code: echo, testPayload: "{}", exampleQueries: tool.examples ?? [] },
        120_000,
      );
      // Registered without examples: nothing to rank, no report.
      if (!tool.examples) expect(response.routingGate).toBeUndefined();
    }
  }, 600_000);

  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("a skill its examples find: rank 1, nothing above it, no warning", async () => {
    const response = await engine.client.register(
      {
        name: "km_to_miles",
        description: "Convert a distance in kilometres to miles.",
        code: echo,
        testPayload: "{}",
        exampleQueries: ["how many miles is 10 km"],
      },
      120_000,
    );
    expect(response.routingGate?.examples).toEqual([
      expect.objectContaining({ query: "how many miles is 10 km", rank: 1, outrankedBy: [], found: true, hasRelevance: true }),
    ]);
    expect(response.routingGate?.warnings).toEqual([]);
    expect(response.routingGate?.shadowed).toEqual([]);
  });

  it("a skill its own examples do not find: its rank, the skills above it, and a warning", async () => {
    const response = await engine.client.register(
      {
        name: "zq_tool",
        description: "Handles zq operations.",
        code: echo,
        testPayload: "{}",
        exampleQueries: ["will it rain in Lisbon this weekend"],
      },
      120_000,
    );
    const [example] = response.routingGate?.examples ?? [];
    expect(example?.found).toBe(false);
    expect(example?.rank).toBeGreaterThan(5);
    expect(example?.outrankedBy).toHaveLength(5);
    expect(example?.outrankedBy).toContain("weather_forecast");
    expect(response.routingGate?.warnings).toEqual([
      expect.stringMatching(/^not found by its example query "will it rain in Lisbon this weekend": ranks \d+, below (\w+, ){4}\w+ \(/),
    ]);
    // The examples are still stored as evidence: the gate reports, it does not refuse.
    expect((await engine.client.get("zq_tool")).skill?.name).toBe("zq_tool");
  });

  it("a skill that would take another skill's query: which skill, which query, both ranks", async () => {
    const response = await engine.client.register(
      {
        name: "euro_to_yen",
        description: "How many Japanese yen an amount of euros is worth today, at the euro to yen exchange rate.",
        code: echo,
        testPayload: "{}",
        exampleQueries: ["convert euros to yen"],
      },
      120_000,
    );
    expect(response.routingGate?.examples[0]).toMatchObject({ rank: 1, found: true });
    // Ranked as a new query of those words: currency_convert without that query as its evidence.
    expect(response.routingGate?.shadowed).toEqual([
      { skill: "currency_convert", query: "how many yen is 50 euros", rank: 1, skillRank: 2 },
    ]);
    expect(response.routingGate?.warnings).toEqual([
      'would shadow currency_convert: ranks above it for 1 of its queries ("how many yen is 50 euros")',
    ]);
  });

  it("skillctl register prints the report", async () => {
    const file = path.join(dir, "lbs.py");
    await writeFile(file, echo);
    const run = await skillctl(
      engine.app.port,
      "register",
      file,
      "--name",
      "lbs_to_kg",
      "--description",
      "Convert a weight in pounds to kilograms.",
      "--example",
      "how many kilograms is 12 pounds",
      "--example",
      "will it rain in Lisbon this weekend",
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^routing: example "how many kilograms is 12 pounds": rank 1, relevance \d\.\d\d$/m);
    expect(run.stdout).toMatch(
      /^routing: example "will it rain in Lisbon this weekend": rank \d+, relevance \d\.\d\d, below .*weather_forecast.* \(not found\)$/m,
    );
    expect(run.stdout).toMatch(/^warning: routing: not found by its example query "will it rain in Lisbon this weekend"/m);
  });
});
