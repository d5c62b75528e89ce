import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { QdrantClient } from "@qdrant/js-client-rest";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { SkillEngineError } from "../errors/index.js";
import { FakeQdrantServer } from "../../test/support/fake-qdrant-server.js";
import { VectorIndexUnavailableError } from "./index-errors.js";
import { skillPointId } from "./point-id.js";
import { parseQdrantUrl } from "./qdrant-endpoint.js";
import { QdrantVectorIndex, qdrantCollectionName } from "./qdrant-index.js";
import { unit, vectorIndexContract } from "./vector-index.contract.js";
import { audienceOf, PUBLIC_AUDIENCE, SKILL_PAYLOAD_TYPE, type VectorIndexEntry } from "./vector-index.js";

const QDRANT_URL = process.env["QDRANT_URL"];

// The real thing, when a deployment or CI provides one. None can be run on the build machines.
describe.skipIf(!QDRANT_URL)("QdrantVectorIndex against the Qdrant at QDRANT_URL", () => {
  vectorIndexContract(
    "qdrant (real server)",
    async () => {
      const collection = `contract_${randomUUID().slice(0, 8)}`;
      const url = QDRANT_URL as string;
      const apiKey = process.env["QDRANT_API_KEY"];
      const endpoint = parseQdrantUrl(url);
      return {
        index: new QdrantVectorIndex({ url, collection, ...(apiKey ? { apiKey } : {}) }),
        dispose: async () => {
          const client = new QdrantClient({
            host: endpoint.host,
            port: endpoint.port,
            https: endpoint.https,
            ...(endpoint.prefix ? { prefix: endpoint.prefix } : {}),
            checkCompatibility: false,
            ...(apiKey ? { apiKey } : {}),
          });
          await client.deleteCollection(collection);
        },
      };
    },
    { onNewDimensions: "refuse" },
  );
});

describe("QdrantVectorIndex against a fake Qdrant REST server", () => {
  const server = new FakeQdrantServer();
  let url: string;

  beforeAll(async () => {
    url = await server.start();
  });
  afterAll(async () => {
    await server.stop();
  });

  // The same contract as sqlite-vec: proves the adapter's requests and parsing compose into the
  // port's behaviour, with the fake standing in for Qdrant's filtering and scoring.
  vectorIndexContract(
    "qdrant adapter (fake server)",
    async () => ({
      index: new QdrantVectorIndex({ url, collection: `contract_${randomUUID().slice(0, 8)}` }),
    }),
    { onNewDimensions: "refuse" },
  );

  describe("request shapes", () => {
    let collection: string;
    let index: QdrantVectorIndex;

    beforeEach(() => {
      collection = `shapes_${randomUUID().slice(0, 8)}`;
      index = new QdrantVectorIndex({ url, collection });
      server.requests.length = 0;
    });

    const sent = (): Array<{ method: string; path: string; query: Record<string, string>; body: unknown }> =>
      server.requests.map(({ method, path, query, body }) => ({ method, path, query, body }));

    it("ensure creates a Cosine collection of the right size and keyword payload indexes", async () => {
      await index.ensure(4);
      expect(sent()).toEqual([
        { method: "GET", path: `/collections/${collection}`, query: {}, body: undefined },
        { method: "PUT", path: `/collections/${collection}`, query: {}, body: { vectors: { size: 4, distance: "Cosine" } } },
        ...["type", "status", "owner", "visibility", "audience"].map((field) => ({
          method: "PUT",
          path: `/collections/${collection}/index`,
          query: { wait: "true" },
          body: { field_name: field, field_schema: "keyword" },
        })),
      ]);
    });

    it("ensure leaves a matching collection alone, and refuses (never deletes) one of another size or with named vectors", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      await index.ensure(4);
      expect(server.requestsTo("PUT", /^\/collections\/[^/]+$/)).toHaveLength(0);

      const error = await index.ensure(8).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VectorIndexUnavailableError);
      expect(error).toMatchObject({ reason: "incompatible" });
      expect((error as Error).message).toContain(`holds 4-dimensional Cosine vectors, not 8-dimensional Cosine vectors`);
      expect(server.collections.get(collection)?.size).toBe(4);

      const shared = `shared_${randomUUID().slice(0, 8)}`;
      server.collections.set(shared, {
        size: 0,
        distance: "",
        named: { image: { size: 512, distance: "Dot" } },
        points: new Map(),
        payloadIndexes: new Map(),
        operations: 0,
      });
      await expect(new QdrantVectorIndex({ url, collection: shared }).ensure(4)).rejects.toThrow(/holds named vectors \(image\)/);
      expect(server.requestsTo("DELETE", /.*/)).toHaveLength(0);
      expect(server.collections.has(shared)).toBe(true);
    });

    it("names a collection after the embedder, so a new model or size gets a collection of its own", () => {
      expect(qdrantCollectionName("minilm-l6-v2@0.1.0", 384)).toBe("skill_engine_skills_minilm-l6-v2-0-1-0_384");
      expect(qdrantCollectionName("openai:text-embedding-3-small", 1536)).toBe("skill_engine_skills_openai-text-embedding-3-small_1536");
      expect(qdrantCollectionName("use-lite-en@0.2.0", 512, "team_a")).toMatch(/^team_a_use-lite-en-0-2-0_512$/);
    });

    it("upgrades a collection from before audience: adds its payload index, and re-upserted points match it", async () => {
      // What the previous version left: keyword indexes without audience, points without it.
      server.collections.set(collection, {
        size: 4,
        distance: "Cosine",
        points: new Map([
          [
            skillPointId("old_private"),
            {
              id: skillPointId("old_private"),
              vector: [1, 0, 0, 0],
              payload: { type: SKILL_PAYLOAD_TYPE, name: "old_private", owner: "alice", visibility: "private", status: "active" },
            },
          ],
        ]),
        payloadIndexes: new Map(["type", "status", "owner", "visibility"].map((field) => [field, "keyword"])),
        operations: 0,
      });
      await index.ensure(4);
      expect(server.collections.get(collection)?.payloadIndexes.get("audience")).toBe("keyword");
      expect(await index.count()).toBe(1);
      const own = { audiences: [PUBLIC_AUDIENCE, audienceOf("alice", "private")] };
      // Until the router re-indexes (INDEX_LAYOUT), the old point is in nobody's scope.
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: own })).toEqual([]);
      await index.upsert([entry("old_private", [1, 0, 0, 0], { owner: "alice", visibility: "private" })]);
      expect((await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: own })).map((hit) => hit.id)).toEqual(["old_private"]);
    });

    it("ensure tolerates another replica creating the collection first", async () => {
      server.collections.set(collection, {
        size: 4,
        distance: "Cosine",
        points: new Map(),
        payloadIndexes: new Map(),
        operations: 0,
      });
      // Our first read misses it; our create then conflicts (409) with the other replica's.
      server.injectFault({ path: new RegExp(`^/collections/${collection}$`), status: 404, body: { status: { error: "Not found" } } });
      await index.ensure(4);
      expect(server.requestsTo("PUT", new RegExp(`^/collections/${collection}$`))).toHaveLength(1);
      expect(await index.count()).toBe(0);
    });

    it("upsert sends name-based UUIDs, the vector, the full payload, and waits", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      await index.upsert([entry("parse_csv", [1, 2, 0, 0], { owner: "agent-7", visibility: "private", status: "degraded" })]);
      const [request] = sent();
      expect(request).toMatchObject({ method: "PUT", path: `/collections/${collection}/points`, query: { wait: "true" } });
      const body = request?.body as { points: Array<{ id: string; vector: number[]; payload: unknown }> };
      expect(body.points).toHaveLength(1);
      expect(body.points[0]?.id).toBe(skillPointId("parse_csv"));
      expect(body.points[0]?.vector).toHaveLength(4);
      expect(body.points[0]?.vector[1]).toBeCloseTo(2 / Math.sqrt(5), 6);
      expect(body.points[0]?.payload).toEqual({
        type: SKILL_PAYLOAD_TYPE,
        name: "parse_csv",
        owner: "agent-7",
        visibility: "private",
        audience: [audienceOf("agent-7", "private")],
        grant_audiences: [],
        status: "degraded",
      });
    });

    it("upsert splits large batches", async () => {
      const small = new QdrantVectorIndex({ url, collection, batchSize: 2 });
      await small.ensure(4);
      server.requests.length = 0;
      await small.upsert(Array.from({ length: 5 }, (_, i) => entry(`s${i}`, [1, i, 0, 0])));
      const bodies = server.requestsTo("PUT", /\/points$/).map((request) => (request.body as { points: unknown[] }).points.length);
      expect(bodies).toEqual([2, 2, 1]);
      expect(await small.count()).toBe(5);
    });

    it("remove deletes the points by their UUIDs and waits", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      await index.remove(["a", "b"]);
      expect(sent()).toEqual([
        {
          method: "POST",
          path: `/collections/${collection}/points/delete`,
          query: { wait: "true" },
          body: { points: [skillPointId("a"), skillPointId("b")] },
        },
      ]);
    });

    it("search uses the Query API with must conditions and maps payload names back to ids", async () => {
      await index.ensure(4);
      await index.upsert([entry("alpha", [1, 0, 0, 0]), entry("beta", [0, 1, 0, 0])]);
      server.requests.length = 0;
      const hits = await index.search(unit([1, 0, 0, 0]), {
        limit: 3,
        filter: {
          statuses: ["active", "degraded"],
          owners: ["alice"],
          visibility: ["public", "private"],
          audiences: [PUBLIC_AUDIENCE, audienceOf("alice", "private")],
        },
      });
      expect(hits.map((hit) => hit.id)).toEqual(["alpha", "beta"]);
      expect(sent()).toEqual([
        {
          method: "POST",
          path: `/collections/${collection}/points/query`,
          query: {},
          body: {
            query: [1, 0, 0, 0],
            filter: {
              must: [
                { key: "type", match: { value: "acquired_skill" } },
                { key: "status", match: { any: ["active", "degraded"] } },
                { key: "owner", match: { any: ["alice"] } },
                { key: "visibility", match: { any: ["public", "private"] } },
                { key: "audience", match: { any: ["public", audienceOf("alice", "private")] } },
              ],
            },
            limit: 3,
            with_payload: ["name"],
          },
        },
      ]);
    });

    it("never returns points that are not skills, even in a shared collection", async () => {
      await index.ensure(4);
      await index.upsert([entry("skill", [0, 1, 0, 0])]);
      server.collections.get(collection)?.points.set(7, { id: 7, vector: [1, 0, 0, 0], payload: { type: "document", name: "x" } });
      expect((await index.search(unit([1, 0, 0, 0]), { limit: 5 })).map((hit) => hit.id)).toEqual(["skill"]);
      expect(await index.count()).toBe(1);
    });

    it("count is exact and restricted to skill points", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      await index.count();
      expect(sent()).toEqual([
        {
          method: "POST",
          path: `/collections/${collection}/points/count`,
          query: {},
          body: { filter: { must: [{ key: "type", match: { value: "acquired_skill" } }] }, exact: true },
        },
      ]);
    });

    it("an empty allowlist answers without a request", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: { owners: [] } })).toEqual([]);
      expect(server.requests).toHaveLength(0);
    });

    it("sends the API key header when one is configured", async () => {
      const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined); // "api key over http"
      const keyed = new QdrantVectorIndex({ url, collection, apiKey: "s3cret" });
      warn.mockRestore();
      await keyed.ensure(4);
      expect(server.requests.every((request) => request.headers["api-key"] === "s3cret")).toBe(true);
    });

    it("rejects vectors of the wrong size before sending them", async () => {
      await index.ensure(4);
      server.requests.length = 0;
      await expect(index.upsert([entry("x", [1, 0, 0])])).rejects.toMatchObject({ kind: "failed-precondition" });
      expect(server.requests).toHaveLength(0);
    });
  });

  describe("error translation", () => {
    let collection: string;
    let index: QdrantVectorIndex;

    beforeEach(async () => {
      collection = `errors_${randomUUID().slice(0, 8)}`;
      index = new QdrantVectorIndex({ url, collection });
      await index.ensure(4);
    });

    it("an unreachable Qdrant is UNAVAILABLE, names the endpoint and hides credentials", async () => {
      const port = await closedPort();
      const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
      // A refused connection fails at once; the deadline only bounds a machine too loaded to say so.
      const down = new QdrantVectorIndex({ url: `http://127.0.0.1:${port}`, apiKey: "s3cret", timeoutMs: 30_000 });
      warn.mockRestore();
      const error = await down.ensure(4).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VectorIndexUnavailableError);
      expect(error).toMatchObject({ kind: "unavailable", backend: "qdrant" });
      expect((error as Error).message).toContain(`127.0.0.1:${port}`);
      expect((error as Error).message).toContain("unreachable");
      expect((error as Error).message).not.toContain("s3cret");
      await expect(down.search(unit([1, 0, 0, 0]), { limit: 1 })).rejects.toBeInstanceOf(VectorIndexUnavailableError);
    });

    it("a 503 is UNAVAILABLE with Qdrant's message", async () => {
      server.injectFault({ status: 503, body: { status: { error: "Service Unavailable: overloaded" }, time: 0 } });
      const error = await index.search(unit([1, 0, 0, 0]), { limit: 1 }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VectorIndexUnavailableError);
      expect((error as Error).message).toContain("overloaded");
    });

    it("a 429 is UNAVAILABLE so routing falls back instead of failing", async () => {
      server.injectFault({ status: 429, body: { status: { error: "Too many requests" }, time: 0 } });
      await expect(index.count()).rejects.toBeInstanceOf(VectorIndexUnavailableError);
    });

    it("an answer later than the deadline is UNAVAILABLE", async () => {
      const impatient = new QdrantVectorIndex({ url, collection, timeoutMs: 200 });
      server.injectFault({ delayMs: 2_000 });
      const error = await impatient.count().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VectorIndexUnavailableError);
      expect((error as Error).message).toContain("did not answer in time");
    });

    it("a dropped connection is UNAVAILABLE", async () => {
      server.injectFault({ destroy: true });
      await expect(index.count()).rejects.toBeInstanceOf(VectorIndexUnavailableError);
    });

    it("every refusal is UNAVAILABLE with a reason (routing falls back) and carries Qdrant's words", async () => {
      const cases: Array<[number, unknown, string, RegExp]> = [
        [
          400,
          { status: { error: "Wrong input: Vector dimension error" }, time: 0 },
          "rejected",
          /400: Wrong input: Vector dimension error/,
        ],
        [408, { status: { error: "Timeout error: deadline has elapsed" }, time: 0 }, "timeout", /timed out on its side \(408/],
        [
          422,
          { status: { error: "Validation error in JSON body: [limit: value 0 invalid]" }, time: 0 },
          "rejected",
          /422: Validation error/,
        ],
        [500, { status: { error: "Service internal error: boom" }, time: 0 }, "overloaded", /Service internal error: boom/],
      ];
      for (const [status, body, reason, message] of cases) {
        server.injectFault({ status, body });
        const error = await index.search(unit([1, 0, 0, 0]), { limit: 1 }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(VectorIndexUnavailableError);
        expect(error).toMatchObject({ kind: "unavailable", reason });
        expect((error as Error).message).toMatch(message);
      }
    });

    it("a collection that disappeared is UNAVAILABLE with reason missing", async () => {
      server.collections.delete(collection);
      await expect(index.search(unit([1, 0, 0, 0]), { limit: 1 })).rejects.toMatchObject({ kind: "unavailable", reason: "missing" });
    });

    it("a malformed URL is refused at construction", () => {
      expect(() => new QdrantVectorIndex({ url: "qdrant:6333" })).toThrow(SkillEngineError);
    });
  });

  describe("API keys, as the pinned server checks them", () => {
    const keyed = new FakeQdrantServer({ apiKey: "rw-key", readOnlyApiKey: "ro-key" });
    let keyedUrl: string;
    beforeAll(async () => {
      keyedUrl = await keyed.start();
      // The client warns about a key over plain HTTP on every construction; the tests know.
      vi.spyOn(console, "warn").mockImplementation(() => undefined);
    });
    afterAll(async () => {
      await keyed.stop();
    });

    it("a missing or wrong key is UNAVAILABLE (unauthorized) with Qdrant's plain-text reason and a hint", async () => {
      for (const apiKey of [undefined, "wrong"]) {
        const index = new QdrantVectorIndex({ url: keyedUrl, collection: "keyed", ...(apiKey ? { apiKey } : {}) });
        const error = await index.ensure(4).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ kind: "unavailable", reason: "unauthorized" });
        expect((error as Error).message).toMatch(/refused the API key \(401: (Must provide an API key|Invalid API key)/);
        expect((error as Error).message).toContain("check QDRANT_API_KEY");
        expect((error as Error).message).not.toContain("wrong");
      }
    });

    it("a read-only key reads but is forbidden to write", async () => {
      await new QdrantVectorIndex({ url: keyedUrl, collection: "keyed_ro", apiKey: "rw-key" }).ensure(4);
      const readOnly = new QdrantVectorIndex({ url: keyedUrl, collection: "keyed_ro", apiKey: "ro-key" });
      expect(await readOnly.count()).toBe(0);
      await expect(readOnly.upsert([entry("a", [1, 0, 0, 0])])).rejects.toMatchObject({ kind: "unavailable", reason: "forbidden" });
    });
  });

  describe("where the URL points", () => {
    it("a path in QDRANT_URL is the prefix every request goes under (a reverse proxy)", async () => {
      const proxied = new FakeQdrantServer({ prefix: "/qdrant" });
      const proxiedUrl = await proxied.start();
      try {
        expect(proxiedUrl).toMatch(/\/qdrant$/);
        const index = new QdrantVectorIndex({ url: proxiedUrl, collection: "behind_proxy" });
        await index.ensure(4);
        await index.upsert([entry("a", [1, 0, 0, 0])]);
        expect((await index.search(unit([1, 0, 0, 0]), { limit: 1 }))[0]?.id).toBe("a");
        expect(proxied.collections.get("behind_proxy")?.points.size).toBe(1);
        // Without the prefix the same server answers Qdrant's empty 404: the adapter says "missing", not "crashed".
        const stripped = new QdrantVectorIndex({ url: proxiedUrl.replace(/\/qdrant$/, ""), collection: "behind_proxy" });
        await expect(stripped.count()).rejects.toMatchObject({ kind: "unavailable", reason: "missing" });
      } finally {
        await proxied.stop();
      }
    });

    it("a URL without a port goes to the scheme's port, not 6333", async () => {
      // Port 80 on loopback: nothing of ours listens there, so the error names where it went.
      const index = new QdrantVectorIndex({ url: "http://127.0.0.1", collection: "no_port", timeoutMs: 30_000 });
      const error = await index.count().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(VectorIndexUnavailableError);
      expect((error as Error).message).toContain("Qdrant at http://127.0.0.1 ");
      // The socket error down the cause chain says which port was dialled.
      let cause: unknown = error;
      let port: unknown;
      for (let depth = 0; depth < 6 && typeof cause === "object" && cause !== null && port === undefined; depth++) {
        port = (cause as { port?: unknown }).port;
        cause = (cause as { cause?: unknown }).cause;
      }
      expect(port).toBe(80);
    });
  });

  describe("request sizes", () => {
    it("splits upserts by bytes, so thousands of dimensions stay under Qdrant's request limit", async () => {
      const small = new FakeQdrantServer({ maxBodyBytes: 2 * 1024 * 1024 });
      const smallUrl = await small.start();
      try {
        const index = new QdrantVectorIndex({ url: smallUrl, collection: "wide", maxRequestBytes: 1024 * 1024 });
        await index.ensure(6000);
        const wide = Array.from({ length: 40 }, (_, i) => {
          const values = Array.from({ length: 6000 }, (_, d) => Math.sin(i * 7 + d) * 0.1 + (d === i ? 1 : 0));
          return entry(`wide_${i}`, values);
        });
        await index.upsert(wide);
        expect(await index.count()).toBe(40);
        const bodies = small.requestsTo("PUT", /\/points$/);
        expect(bodies.length).toBeGreaterThan(1);
        for (const request of bodies) expect(JSON.stringify(request.body).length).toBeLessThan(1024 * 1024);
      } finally {
        await small.stop();
      }
    });
  });

  afterEach(() => {
    vi.restoreAllMocks();
  });
});

function entry(id: string, vector: number[], payload: Partial<VectorIndexEntry["payload"]> = {}): VectorIndexEntry {
  return {
    id,
    vector: unit(vector),
    payload: { type: SKILL_PAYLOAD_TYPE, name: id, owner: "alice", visibility: "public", status: "active", ...payload },
  };
}

/** A port nothing listens on: bind one, note it, release it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}
