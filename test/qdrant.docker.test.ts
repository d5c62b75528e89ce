import { afterEach, describe, expect, it, vi } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { FakeQdrantServer } from "./support/fake-qdrant-server.js";
import { eventually } from "./support/poll.js";
import { connect, makeDirs, metricSamples, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const echo = "import json, sys\nprint(json.dumps(json.loads(sys.argv[1])))\n";
const SKILLS = [
  { name: "weather_forecast", description: "Get the weather forecast (temperature, rain, wind) for a city for the next days." },
  { name: "currency_convert", description: "Convert an amount of money from one currency to another at today's exchange rate." },
];

/**
 * Qdrant as an operator meets it (docs/routing.md#qdrant), through the real service and a stand-in
 * that answers like the pinned server: turned on for a home that already has skills, losing its
 * collection, refusing the key.
 */
describe("Qdrant behind the real service", () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function qdrant(options: ConstructorParameters<typeof FakeQdrantServer>[0] = {}): Promise<FakeQdrantServer> {
    const server = new FakeQdrantServer(options);
    await server.start();
    cleanups.push(() => server.stop());
    return server;
  }

  async function engineWith(dirs: Awaited<ReturnType<typeof makeDirs>>, env: Record<string, string> = {}): Promise<TestEngine> {
    const engine = await startTestEngine({ dirs, env });
    cleanups.push(() => engine.dispose());
    return engine;
  }

  /** A home whose skills were registered before Qdrant was configured (one with example queries). */
  async function homeWithSkills(): Promise<Awaited<ReturnType<typeof makeDirs>>> {
    const dirs = await makeDirs();
    const before = await startTestEngine({ dirs });
    try {
      for (const [i, skill] of SKILLS.entries()) {
        await before.client.register({
          ...skill,
          code: echo,
          testPayload: "{}",
          exampleQueries: i === 0 ? ["will it rain in Lisbon", "how warm is it in Oslo tomorrow"] : [],
        });
      }
    } finally {
      // stop(), not dispose(): the home must outlive this engine.
      await before.stop();
    }
    return dirs;
  }

  const route = (engine: TestEngine, query: string) =>
    engine.client.call(engine.client.raw.routeSkills, {
      query,
      limit: 3,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_VECTORS,
      minRelevance: 0,
    });

  const pointsIn = (server: FakeQdrantServer): number =>
    [...server.collections.entries()]
      .filter(([name]) => name.startsWith("skill_engine_skills_minilm"))
      .reduce((n, [, c]) => n + c.points.size, 0);

  it("turned on for a home that already has skills, fills Qdrant at start-up and then routes from it", async () => {
    const dirs = await homeWithSkills();
    const server = await qdrant();
    const engine = await engineWith(dirs, { QDRANT_URL: server.url });
    // Two skills and two example queries: four vectors.
    await eventually("Qdrant filled", () => (pointsIn(server) === 4 ? true : undefined));
    const routed = await eventually("a route served by Qdrant", async () => {
      const answer = await route(engine, "is it going to rain in Porto?");
      return answer.degraded.length === 0 ? answer : undefined;
    });
    expect(routed.skills[0]?.name).toBe("weather_forecast");
    expect(server.requestsTo("POST", /\/points\/query$/).length).toBeGreaterThan(0);
    // The collection carries the embedder's identity, and was created with the payload indexes.
    const [name, collection] = [...server.collections.entries()][0] ?? [];
    expect(name).toMatch(/^skill_engine_skills_minilm-l6-v2-[0-9-]+_384$/);
    expect(collection?.payloadIndexes.size).toBe(5);
  });

  it("routes grants from Qdrant: an agent's and a user's grant reach them in one filtered query, nobody else", async () => {
    const server = await qdrant();
    const tokens = {
      alice: "alice-0123456789abcdef",
      bob: "bob-0123456789abcdef01",
      carol: "carol-0123456789abcdef",
      desk: "desk-0123456789abcdef0",
    };
    const engine = await engineWith(await makeDirs(), {
      QDRANT_URL: server.url,
      SKILL_ENGINE_TOKENS: `alice=${tokens.alice},bob=${tokens.bob},carol=${tokens.carol},desk:delegate=${tokens.desk}`,
    });
    const alice = connect(engine.app.port, tokens.alice);
    const clients: Record<string, TestClient> = {
      bob: connect(engine.app.port, tokens.bob),
      carol: connect(engine.app.port, tokens.carol),
      "desk+u1": connect(engine.app.port, tokens.desk, undefined, { "x-user-id": "u1" }),
      "desk+u2": connect(engine.app.port, tokens.desk, undefined, { "x-user-id": "u2" }),
    };
    cleanups.push(async () => {
      for (const client of [alice, ...Object.values(clients)]) client.close();
    });
    for (const skill of SKILLS) await alice.register({ ...skill, code: echo, testPayload: "{}" });
    await alice.call(alice.raw.grantSkill, { name: "weather_forecast", granteeAgent: "bob", granteeUser: "", version: 0 });
    await alice.call(alice.raw.grantSkill, { name: "currency_convert", granteeAgent: "", granteeUser: "u1", version: 0 });
    const routedBy = async (who: string) => {
      const client = clients[who] as TestClient;
      const answer = await eventually(`a route for ${who} served by Qdrant`, async () => {
        const routed = await client.call(client.raw.routeSkills, {
          query: "weather or money",
          limit: 5,
          format: ToolFormat.TOOL_FORMAT_OPENAI,
          mode: RouteMode.ROUTE_MODE_VECTORS,
          minRelevance: 0,
        });
        return routed.degraded.length === 0 ? routed : undefined;
      });
      return answer.skills.map((s) => s.name).sort();
    };
    expect(await routedBy("bob")).toEqual(["weather_forecast"]);
    expect(await routedBy("desk+u1")).toEqual(["currency_convert"]);
    expect(await routedBy("desk+u2")).toEqual([]);
    expect(await routedBy("carol")).toEqual([]);
    // The points carry every audience as an array, filtered with match any.
    const searches = server.requestsTo("POST", /\/points\/query$/);
    expect(JSON.stringify(searches.at(-1)?.body)).toMatch(/"key":"audience","match":\{"any":\[/);
  });

  it("refills a Qdrant that lost its collection, routing from the embedded index meanwhile", async () => {
    const dirs = await homeWithSkills();
    const server = await qdrant();
    const engine = await engineWith(dirs, { QDRANT_URL: server.url });
    await eventually("Qdrant filled", () => (pointsIn(server) === 4 ? true : undefined));
    server.collections.clear();
    const during = await route(engine, "is it going to rain in Porto?");
    expect(during.skills[0]?.name).toBe("weather_forecast");
    expect(during.degraded).toEqual(["qdrant lost its collection (re-creating and refilling it); used the embedded index"]);
    await eventually("Qdrant refilled", () => (pointsIn(server) === 4 ? true : undefined));
    await eventually("routes served by Qdrant again", async () =>
      (await route(engine, "rain in Porto?")).degraded.length === 0 ? true : undefined,
    );
  });

  it("starts with a wrong API key, routes from the embedded index saying why, and counts it", async () => {
    // The client warns about a key over plain HTTP; the stand-in is plain HTTP on loopback.
    vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const dirs = await homeWithSkills();
    const server = await qdrant({ apiKey: "the-right-key" });
    const engine = await engineWith(dirs, { QDRANT_URL: server.url, QDRANT_API_KEY: "a-wrong-key" });
    const routed = await route(engine, "convert 100 euros to dollars");
    expect(routed.skills[0]?.name).toBe("currency_convert");
    expect(routed.degraded).toEqual(["qdrant refused the API key (check QDRANT_API_KEY); used the embedded index"]);
    const counted = await metricSamples(engine, "skill_engine_vector_index_unavailable_total");
    expect(counted).toContainEqual({ labels: { reason: "unauthorized" }, value: 1 });
    expect(pointsIn(server)).toBe(0);
    vi.restoreAllMocks();
  });
});
