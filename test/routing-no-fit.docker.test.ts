import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const echo = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";
/** A dozen small, unrelated skills, as a new user's first catalog (issue 40's example). */
const TOOLS = [
  { name: "km_to_miles", description: "Convert a distance in kilometres to miles." },
  { name: "celsius_to_fahrenheit", description: "Convert a temperature from degrees Celsius to degrees Fahrenheit." },
  { name: "add_numbers", description: "Add two numbers and return their sum." },
  { name: "word_count", description: "Count the words in a piece of text." },
  { name: "slugify_title", description: "Turn a title into a URL slug: lowercase words joined by hyphens." },
  { name: "json_pretty_print", description: "Pretty-print a JSON document with two-space indentation." },
  { name: "roman_numerals", description: "Convert an integer to Roman numerals." },
  { name: "bmi_calculator", description: "Compute the body mass index from a weight in kilograms and a height in metres." },
  { name: "days_between_dates", description: "Count the days between two calendar dates." },
  { name: "password_strength", description: "Rate how strong a password is and say why." },
  { name: "hex_to_rgb", description: "Convert a hex colour code such as #ff8800 to its red, green and blue values." },
  { name: "reverse_string", description: "Reverse the characters of a string." },
];

describe("RouteSkills says when no skill fits (docs/routing.md#no-skill-fits)", () => {
  let engine: TestEngine;
  const route = (query: string, minRelevance?: number) =>
    engine.client.call(engine.client.raw.routeSkills, {
      query,
      limit: 5,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_FUSED,
      ...(minRelevance === undefined ? {} : { minRelevance }),
    });

  beforeAll(async () => {
    engine = await startTestEngine();
    for (const tool of TOOLS) {
      await engine.client.register({ ...tool, code: echo, parametersSchema: '{"type":"object"}', testPayload: "{}" }, 180_000);
    }
  }, 600_000);
  afterAll(async () => {
    await engine.dispose();
  });

  it("answers nothing, with no_fit, for queries no skill serves, at the default floor", async () => {
    for (const query of ["book me a flight to Paris", "what's the weather in Oslo", "play some jazz in the living room"]) {
      const answer = await route(query);
      expect({ query, skills: answer.skills.map((s) => s.name), noFit: answer.noFit }).toEqual({ query, skills: [], noFit: true });
    }
  });

  it("answers the queries a skill serves, best first, with no_fit false", async () => {
    for (const [query, name] of [
      ["what is 17 plus 25?", "add_numbers"],
      ["how many miles is 42 km", "km_to_miles"],
      ["convert 30 degrees celsius to fahrenheit", "celsius_to_fahrenheit"],
    ] as const) {
      const answer = await route(query);
      expect({ query, first: answer.skills[0]?.name, noFit: answer.noFit }).toEqual({ query, first: name, noFit: false });
      expect(answer.skills[0]?.hasRelevance).toBe(true);
    }
  });

  it("keeps today's behaviour with min_relevance 0: the best candidates, whatever they are", async () => {
    const answer = await route("book me a flight to Paris", 0);
    expect(answer.skills).toHaveLength(5);
    expect(answer.noFit).toBe(false);
  });
});
