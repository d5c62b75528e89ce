import path from "node:path";
import { status } from "@grpc/grpc-js";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Hardening, RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const echo =
  'import json, sys\nargs = json.loads(sys.argv[1])\nif args.get("fail"):\n    raise RuntimeError("asked to fail")\nprint(json.dumps(args))\n';
const TOOLS = [
  { name: "weather_forecast", description: "Get the weather forecast (temperature, rain, wind) for a city for the next days." },
  { name: "currency_convert", description: "Convert an amount of money from one currency to another at today's exchange rate." },
  { name: "reminder_create", description: "Create a reminder with a title and a time; the user is notified then." },
  { name: "movie_credits", description: "List the cast and crew of a movie given its id." },
  { name: "zq_tool", description: "Handles zq operations." }, // a poor description: only evidence can save it
];

describe("RouteSkills through gRPC: fused keywords + vectors, hardened tool definitions, learning from use", () => {
  let engine: TestEngine;
  const route = (
    query: string,
    extra: Partial<{ limit: number; format: ToolFormat; mode: RouteMode; minRelevance: number; hardening: Hardening }> = {},
  ) =>
    engine.client.call(engine.client.raw.routeSkills, {
      query,
      limit: 3,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_FUSED,
      ...extra,
    });

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_WINDOW_SIZE: "4" } });
    for (const tool of TOOLS) {
      await engine.client.register({
        name: tool.name,
        description: tool.description,
        code: echo,
        parametersSchema: '{"type":"object","properties":{"city":{"type":"string"},"fail":{"type":"boolean"}},"required":["city"]}',
        testPayload: '{"city": "Athens"}',
        exampleQueries: tool.name === "reminder_create" ? ["ping me tomorrow at nine about the dentist"] : [],
      });
    }
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("puts the relevant skill first, by keywords and by meaning", async () => {
    expect((await route("will it rain in Lisbon this weekend?")).skills[0]?.name).toBe("weather_forecast");
    expect((await route("how many yen is 50 euros")).skills[0]?.name).toBe("currency_convert");
    // Only the example query given at registration links this wording to the skill.
    expect((await route("ping me tomorrow morning about the dentist")).skills[0]?.name).toBe("reminder_create");
  });

  it("returns ready-to-use, hardened tool definitions in OpenAI and Anthropic shapes", async () => {
    // Seed 000's full hardening on request (the default is one short line: routing-tool-formats.docker.test.ts).
    const openai = (await route("weather forecast for Paris", { hardening: Hardening.HARDENING_FULL })).skills[0];
    expect(openai?.description).toMatch(/^\[ACQUIRED SKILL — CALL BY NAME\] Get the weather forecast/);
    expect(openai?.description).toContain('weather_forecast({"city":"<city>"})');
    expect(openai?.description).toContain("python3 acquired_skills/weather_forecast.py");
    expect(JSON.parse(openai?.toolDefinition ?? "{}")).toMatchObject({
      type: "function",
      function: { name: "weather_forecast", parameters: { type: "object" } },
    });
    const anthropic = (await route("weather forecast for Paris", { format: ToolFormat.TOOL_FORMAT_ANTHROPIC })).skills[0];
    expect(JSON.parse(anthropic?.toolDefinition ?? "{}")).toMatchObject({ name: "weather_forecast", input_schema: { type: "object" } });
    expect(openai?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
  });

  it("ranks by one source alone when asked", async () => {
    const keywords = await route("cast of a movie", { mode: RouteMode.ROUTE_MODE_KEYWORDS });
    expect(keywords.skills[0]?.name).toBe("movie_credits");
    expect(keywords.skills[0]?.vectorRank).toBe(0);
    const vectors = await route("who acted in this film", { mode: RouteMode.ROUTE_MODE_VECTORS });
    expect(vectors.skills[0]?.name).toBe("movie_credits");
    expect(vectors.skills[0]?.keywordRank).toBe(0);
  });

  it("learns from use: a routed invocation that succeeds makes its query evidence for that skill", async () => {
    const query = "translate the quarterly ledger into Klingon glyphs";
    const before = await route(query, { limit: 5, minRelevance: 0 });
    const beforeRank = before.skills.findIndex((s) => s.name === "zq_tool");
    // The agent picked zq_tool from a broader listing (no relevance floor) and it worked: credit it.
    const listing = await route(query, { limit: 5, minRelevance: 0 });
    if (!listing.skills.some((s) => s.name === "zq_tool")) throw new Error("zq_tool must be among 5 routed skills of 5");
    const invoked = await engine.client.invoke("zq_tool", '{"city": "x"}', undefined, listing.routeId);
    expect(invoked.result?.success).toBe(true);
    const after = await route(query, { limit: 5 });
    expect(after.skills[0]?.name).toBe("zq_tool");
    expect(beforeRank === -1 || beforeRank > 0).toBe(true);

    const feedback = await engine.client.call(engine.client.raw.recordRouteFeedback, {
      routeId: after.routeId,
      name: "zq_tool",
      success: true,
    });
    expect(feedback.credited).toBe(true);
    const unknown = await engine.client.call(engine.client.raw.recordRouteFeedback, {
      routeId: "no-such-route",
      name: "zq_tool",
      success: true,
    });
    expect(unknown.credited).toBe(false);
  });

  it("routes only routable skills: deprecated, retired and deleted ones drop out, and come back when restored", async () => {
    for (let i = 0; i < 4; i++) await engine.client.invoke("currency_convert", '{"city": "x", "fail": true}');
    expect((await engine.client.get("currency_convert")).skill?.status).toBe(SkillStatus.SKILL_STATUS_DEPRECATED);
    expect((await route("convert euros to dollars")).skills.map((s) => s.name)).not.toContain("currency_convert");

    const reminderQuery = "ping me tomorrow morning about the dentist";
    expect((await route(reminderQuery)).skills[0]?.name).toBe("reminder_create");
    await engine.client.call(engine.client.raw.retireSkill, { name: "reminder_create", force: false });
    expect((await route(reminderQuery)).skills.map((s) => s.name)).not.toContain("reminder_create");
    await engine.client.call(engine.client.raw.restoreSkill, { name: "reminder_create" });
    expect((await route(reminderQuery)).skills[0]?.name).toBe("reminder_create");

    await engine.client.call(engine.client.raw.deleteSkill, { name: "movie_credits", force: false });
    expect((await route("cast of a movie")).skills.map((s) => s.name)).not.toContain("movie_credits");
    await engine.client.call(engine.client.raw.restoreSkill, { name: "movie_credits" });
    expect((await route("cast of a movie")).skills[0]?.name).toBe("movie_credits");
  });

  it("gives each routed skill a relevance comparable across queries, and answers an empty list when nothing fits", async () => {
    const fits = await route("weather forecast for Paris tomorrow", { minRelevance: 0 });
    const fitsNot = await route("compose a sonnet about autumn leaves in iambic pentameter", { minRelevance: 0 });
    const best = fits.skills[0];
    const bestOfNothing = fitsNot.skills[0];
    expect(best?.name).toBe("weather_forecast");
    expect(best?.hasRelevance).toBe(true);
    expect(bestOfNothing?.hasRelevance).toBe(true);
    for (const skill of [...fits.skills, ...fitsNot.skills]) {
      expect(skill.relevance).toBeGreaterThanOrEqual(0);
      expect(skill.relevance).toBeLessThanOrEqual(1);
    }
    // Relevance is absolute, not relative to the query's other candidates: the best skill for a query
    // that no skill serves is less relevant than the best one for a query that one serves.
    expect(bestOfNothing?.relevance ?? 1).toBeLessThan(best?.relevance ?? 0);
    const floor = ((best?.relevance ?? 0) + (bestOfNothing?.relevance ?? 0)) / 2;
    expect((await route("compose a sonnet about autumn leaves in iambic pentameter", { minRelevance: floor })).skills).toEqual([]);
    expect((await route("weather forecast for Paris tomorrow", { minRelevance: floor })).skills[0]?.name).toBe("weather_forecast");
    // Reciprocal rank fusion stays a mode; keyword-only routes have no relevance to filter on.
    expect((await route("weather forecast for Paris tomorrow", { mode: RouteMode.ROUTE_MODE_RRF })).skills[0]?.name).toBe(
      "weather_forecast",
    );
    const keywordsOnly = await route("weather forecast", { mode: RouteMode.ROUTE_MODE_KEYWORDS, minRelevance: 1 });
    expect(keywordsOnly.skills[0]?.name).toBe("weather_forecast");
    expect(keywordsOnly.skills[0]?.hasRelevance).toBe(false);
    expect((await rpcError(route("weather", { minRelevance: 1.5 }))).details).toMatch(/^min_relevance: must be between 0 and 1/);
  });

  it("rejects bad requests with the field and the reason", async () => {
    expect((await rpcError(route("   "))).details).toMatch(/^query: is required/);
    expect((await rpcError(route("x", { limit: 51 }))).code).toBe(status.INVALID_ARGUMENT);
    const tooLong = await rpcError(route("x ".repeat(16_001)));
    expect(tooLong.code).toBe(status.INVALID_ARGUMENT);
    expect(tooLong.details).toBe("query: is 32001 characters; the limit is 32000");
    // Hostile FTS syntax is just text: the words in it still route.
    expect((await route('NEAR("cast" movie) OR * -x AND (')).skills[0]?.name).toBe("movie_credits");
  });

  it("routes a user message longer than 2,000 characters on its beginning and end, and says so (docs/routing.md#long-queries)", async () => {
    // An agent passes the user's whole message: the ask, then a pasted build log, then a sign-off.
    const ask = "Will it rain in Lisbon this weekend? I pasted our build output below.\n";
    const signOff = "\nThanks, talk soon!";
    const log = Array.from({ length: 400 }, (_, i) => `[build ${i}] compiling module_${i}.o ok\n`).join("");
    const message = ask + log.slice(0, 10_000 - ask.length - signOff.length) + signOff;
    expect(message.length).toBe(10_000);
    const routed = await route(message);
    expect(routed.skills[0]?.name).toBe("weather_forecast");
    expect(routed.warnings).toHaveLength(1);
    expect(routed.warnings[0]).toMatch(
      /^query is 10000 characters, more than the 2000 searched whole: searched on its first \d+ and last \d+ characters \(docs\/routing.md#long-queries\)$/,
    );
    // The ask at the end of the message, after the paste, decides just as well.
    const askLast = "Here is our build output.\n" + log.slice(0, 9_000) + "\nBy the way, who was in the cast of the movie Heat?";
    expect((await route(askLast)).skills[0]?.name).toBe("movie_credits");
    // A query within 2,000 characters is searched whole, without a warning.
    expect((await route("will it rain in Lisbon this weekend?")).warnings).toEqual([]);
  });

  const register = (name: string, description: string) =>
    engine.client.register({
      name,
      description,
      code: echo,
      parametersSchema: '{"type":"object","properties":{"city":{"type":"string"},"fail":{"type":"boolean"}},"required":["city"]}',
      testPayload: '{"city": "Athens"}',
    });

  it("drops a skill from routes once it was routed and invoked twice and never succeeded; it stays invocable by name", async () => {
    await register("parcel_track", "Track a parcel shipment by its tracking number and tell where it is.");
    for (let i = 0; i < 2; i++) {
      const routed = await route("where is my parcel shipment now");
      expect(routed.skills[0]?.name).toBe("parcel_track");
      await engine.client.invoke("parcel_track", '{"city": "x", "fail": true}', undefined, routed.routeId);
    }
    expect((await route("where is my parcel shipment now")).skills.map((s) => s.name)).not.toContain("parcel_track");
    // Not its health: two failures keep it active; the quality filter alone drops it.
    expect((await engine.client.get("parcel_track")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    expect((await engine.client.invoke("parcel_track", '{"city": "x"}')).result?.success).toBe(true);
  });

  it("credits a route's query to a skill only within 10 minutes of the route", async () => {
    await register("tide_table", "Tide times for a harbour.");
    const old = await route("when is high water at the harbour");
    const fresh = await route("high water times at the harbour");
    expect(old.skills[0]?.name).toBe("tide_table");
    expect(fresh.skills[0]?.name).toBe("tide_table");
    // Age the first route by 11 minutes in the service's own registry.db.
    const db = new Database(path.join(engine.home, "registry.db"));
    try {
      db.pragma("busy_timeout = 5000");
      db.prepare("UPDATE routes SET created_at = created_at - ? WHERE route_id = ?").run(11 * 60_000, old.routeId);
    } finally {
      db.close();
    }
    const feedback = (routeId: string) =>
      engine.client.call(engine.client.raw.recordRouteFeedback, { routeId, name: "tide_table", success: true });
    expect((await feedback(old.routeId)).credited).toBe(false);
    expect((await feedback(fresh.routeId)).credited).toBe(true);
  });
});

describe("RouteSkills when the vector backend is unreachable", () => {
  it("routes from the embedded index and says so in RouteSkillsResponse.degraded", async () => {
    // Nothing listens on port 9 of loopback: Qdrant is "down" from the start.
    const engine = await startTestEngine({ env: { QDRANT_URL: "http://127.0.0.1:9" } });
    try {
      await engine.client.register({
        name: "weather_forecast",
        description: TOOLS[0]?.description ?? "",
        code: echo,
        parametersSchema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
        testPayload: '{"city": "Athens"}',
      });
      const routed = await engine.client.call(engine.client.raw.routeSkills, {
        query: "will it rain in Lisbon this weekend?",
        limit: 3,
        format: ToolFormat.TOOL_FORMAT_OPENAI,
        mode: RouteMode.ROUTE_MODE_VECTORS,
      });
      expect(routed.skills[0]?.name).toBe("weather_forecast");
      expect(routed.degraded).toEqual(["qdrant unreachable; used the embedded index"]);
    } finally {
      await engine.dispose();
    }
  });
});
