import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SkillEngineError } from "../errors/index.js";
import {
  agentAudience,
  audienceOf,
  PUBLIC_AUDIENCE,
  SKILL_PAYLOAD_TYPE,
  type SkillIndexPayload,
  type VectorIndex,
  type VectorIndexEntry,
  userAudience,
} from "./vector-index.js";

/** A fresh, empty index for one test, and how to dispose of it afterwards. */
export interface VectorIndexFixture {
  readonly index: VectorIndex;
  readonly dispose?: () => Promise<void>;
}

/**
 * The behaviour every {@link VectorIndex} adapter must share; run by each adapter's test file.
 * Vectors are tiny and hand-made so the expected order is obvious from the numbers.
 */
export function vectorIndexContract(
  label: string,
  create: () => Promise<VectorIndexFixture>,
  /**
   * What `ensure` does with other dimensions: start over (sqlite-vec owns its table) or refuse,
   * leaving the data alone (Qdrant: a collection is named per embedder, so one of another size
   * was not made for these vectors and is never the service's to delete).
   */
  { onNewDimensions = "start-over" }: { onNewDimensions?: "start-over" | "refuse" } = {},
): void {
  describe(`VectorIndex contract: ${label}`, () => {
    let fixture: VectorIndexFixture;
    let index: VectorIndex;

    beforeEach(async () => {
      fixture = await create();
      index = fixture.index;
      await index.ensure(4);
    });

    afterEach(async () => {
      await index.close();
      await fixture.dispose?.();
    });

    it("starts empty and answers an empty search", async () => {
      expect(await index.count()).toBe(0);
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5 })).toEqual([]);
    });

    it("orders hits by cosine similarity, scores being the similarity itself", async () => {
      await index.upsert([
        entry("east", [1, 0, 0, 0]),
        entry("north_east", [1, 1, 0, 0]),
        entry("north", [0, 1, 0, 0]),
        entry("west", [-1, 0, 0, 0]),
      ]);
      const hits = await index.search(unit([1, 0.2, 0, 0]), { limit: 10 });
      expect(hits.map((hit) => hit.id)).toEqual(["east", "north_east", "north", "west"]);
      const cos = (a: number[], b: number[]): number => dot(unit(a), unit(b));
      expect(hits[0]?.score).toBeCloseTo(cos([1, 0.2, 0, 0], [1, 0, 0, 0]), 4);
      expect(hits[1]?.score).toBeCloseTo(cos([1, 0.2, 0, 0], [1, 1, 0, 0]), 4);
      expect(hits[3]?.score).toBeCloseTo(cos([1, 0.2, 0, 0], [-1, 0, 0, 0]), 4);
      const identical = await index.search(unit([0, 1, 0, 0]), { limit: 1 });
      expect(identical).toEqual([{ id: "north", score: expect.closeTo(1, 4) }]);
    });

    it("returns at most limit hits", async () => {
      await index.upsert([entry("a", [1, 0, 0, 0]), entry("b", [0, 1, 0, 0]), entry("c", [0, 0, 1, 0])]);
      expect(await index.search(unit([1, 1, 1, 0]), { limit: 2 })).toHaveLength(2);
      expect(await index.search(unit([1, 1, 1, 0]), { limit: 0 })).toEqual([]);
    });

    it("upserts in place: same id, new vector and payload, no duplicate", async () => {
      await index.upsert([entry("moving", [1, 0, 0, 0]), entry("still", [0, 1, 0, 0])]);
      await index.upsert([entry("moving", [0, 0, 1, 0], { status: "degraded", owner: "bob" })]);
      expect(await index.count()).toBe(2);
      const hits = await index.search(unit([0, 0, 1, 0]), { limit: 5 });
      expect(hits[0]).toEqual({ id: "moving", score: expect.closeTo(1, 4) });
      expect(hits.filter((hit) => hit.id === "moving")).toHaveLength(1);
      expect(ids(await index.search(unit([0, 0, 1, 0]), { limit: 5, filter: { statuses: ["active"] } }))).toEqual(["still"]);
      expect(ids(await index.search(unit([0, 0, 1, 0]), { limit: 5, filter: { owners: ["bob"] } }))).toEqual(["moving"]);
    });

    it("answers each hit's id exactly as it was written, route evidence's compound ids included", async () => {
      // Routing tells a skill's evidence points from the skill's own by the id (docs/routing.md#learning-from-use):
      // an adapter that answered the skill's name for both would lose the evidence discount.
      const evidence = "add_numbers::evidence::9f86d081884c7d65";
      await index.upsert([entry("add_numbers", [1, 0, 0, 0]), entry(evidence, [1, 0.1, 0, 0])]);
      expect(ids(await index.search(unit([1, 0, 0, 0]), { limit: 5 })).sort()).toEqual(["add_numbers", evidence]);
      await index.remove([evidence]);
      expect(ids(await index.search(unit([1, 0, 0, 0]), { limit: 5 }))).toEqual(["add_numbers"]);
    });

    it("removes by id and ignores unknown ids", async () => {
      await index.upsert([entry("keep", [1, 0, 0, 0]), entry("drop", [0, 1, 0, 0])]);
      await index.remove(["drop", "never_there"]);
      await index.remove([]);
      expect(await index.count()).toBe(1);
      expect(ids(await index.search(unit([0, 1, 0, 0]), { limit: 5 }))).toEqual(["keep"]);
    });

    it("filters by status, owner and visibility, AND-ed, before the limit", async () => {
      await index.upsert([
        entry("alice_public", [1, 0, 0, 0], { owner: "alice", visibility: "public" }),
        entry("alice_private", [0.9, 0.1, 0, 0], { owner: "alice", visibility: "private" }),
        entry("bob_private", [0.8, 0.2, 0, 0], { owner: "bob", visibility: "private" }),
        entry("bob_retired", [0.95, 0, 0.05, 0], { owner: "bob", status: "retired" }),
      ]);
      const query = unit([1, 0, 0, 0]);
      expect(ids(await index.search(query, { limit: 10, filter: { statuses: ["active"] } }))).toEqual([
        "alice_public",
        "alice_private",
        "bob_private",
      ]);
      expect(ids(await index.search(query, { limit: 10, filter: { owners: ["bob"] } }))).toEqual(["bob_retired", "bob_private"]);
      expect(ids(await index.search(query, { limit: 10, filter: { visibility: ["private"] } }))).toEqual(["alice_private", "bob_private"]);
      expect(
        ids(
          await index.search(query, {
            limit: 10,
            filter: { statuses: ["active", "degraded"], owners: ["alice", "bob"], visibility: ["private"] },
          }),
        ),
      ).toEqual(["alice_private", "bob_private"]);
    });

    it("filters by audience: an agent's own skills OR the public ones, in one search", async () => {
      await index.upsert([
        entry("alice_public", [1, 0, 0, 0], { owner: "alice", visibility: "public" }),
        entry("alice_private", [0.9, 0.1, 0, 0], { owner: "alice", visibility: "private" }),
        entry("bob_private", [0.8, 0.2, 0, 0], { owner: "bob", visibility: "private" }),
        entry("bob_public", [0.7, 0.3, 0, 0], { owner: "bob", visibility: "public" }),
        entry("alice_retired", [0.95, 0, 0.05, 0], { owner: "alice", visibility: "private", status: "retired" }),
        // An agent may be called "public": its private skills are still its own.
        entry("public_private", [0.85, 0.15, 0, 0], { owner: "public", visibility: "private" }),
      ]);
      const query = unit([1, 0, 0, 0]);
      const scoped = async (agent: string): Promise<string[]> =>
        ids(
          await index.search(query, {
            limit: 10,
            filter: { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, audienceOf(agent, "private")] },
          }),
        );
      expect(await scoped("alice")).toEqual(["alice_public", "alice_private", "bob_public"]);
      expect(await scoped("bob")).toEqual(["alice_public", "bob_private", "bob_public"]);
      expect(await scoped("carol")).toEqual(["alice_public", "bob_public"]);
      expect(await scoped("public")).toEqual(["alice_public", "public_private", "bob_public"]);
      expect(ids(await index.search(query, { limit: 10, filter: { audiences: [PUBLIC_AUDIENCE] } }))).toEqual([
        "alice_public",
        "bob_public",
      ]);
      expect(await index.search(query, { limit: 10, filter: { audiences: [] } })).toEqual([]);
    });

    it("moves an entry to its new audience when its visibility or owner changes", async () => {
      await index.upsert([entry("moving", [1, 0, 0, 0], { owner: "alice", visibility: "private" })]);
      const query = unit([1, 0, 0, 0]);
      const audience = async (...audiences: string[]): Promise<string[]> =>
        ids(await index.search(query, { limit: 5, filter: { audiences } }));
      expect(await audience(audienceOf("alice", "private"))).toEqual(["moving"]);
      await index.upsert([entry("moving", [1, 0, 0, 0], { owner: "alice", visibility: "public" })]);
      expect(await audience(audienceOf("alice", "private"))).toEqual([]);
      expect(await audience(PUBLIC_AUDIENCE)).toEqual(["moving"]);
      await index.upsert([entry("moving", [1, 0, 0, 0], { owner: "bob", visibility: "private" })]);
      expect(await audience(PUBLIC_AUDIENCE, audienceOf("alice", "private"))).toEqual([]);
      expect(await audience(audienceOf("bob", "private"))).toEqual(["moving"]);
    });

    it("applies the audience filter before the limit, however far the matches are", async () => {
      // Other agents' private skills crowd the query; the caller's few are far away.
      const others = Array.from({ length: 200 }, (_, i) =>
        entry(`other_${i}`, [1, 0.001 * i, 0, 0], { owner: `agent-${i % 7}`, visibility: "private" }),
      );
      const own = Array.from({ length: 3 }, (_, i) => entry(`own_${i}`, [-0.1 * i, 1, 0, 0], { owner: "me", visibility: "private" }));
      const shared = Array.from({ length: 3 }, (_, i) => entry(`shared_${i}`, [-0.1 * i - 0.05, 1, 0, 0], { owner: "agent-1" }));
      await index.upsert([...others, ...own, ...shared]);
      const hits = await index.search(unit([1, 0, 0, 0]), {
        limit: 5,
        filter: { statuses: ["active", "degraded"], audiences: [PUBLIC_AUDIENCE, audienceOf("me", "private")] },
      });
      expect(ids(hits)).toEqual(["own_0", "shared_0", "own_1", "shared_1", "own_2"]);
    });

    it("treats an empty allowlist as matching nothing", async () => {
      await index.upsert([entry("a", [1, 0, 0, 0])]);
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: { owners: [] } })).toEqual([]);
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: { statuses: [] } })).toEqual([]);
      expect(await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: { audiences: [] } })).toEqual([]);
    });

    it("still returns limit hits when most rows are filtered out, however far they are", async () => {
      // 200 decoys right next to the query and 6 matching rows far away: a search that took the
      // k nearest first and filtered afterwards would come back empty.
      const decoys = Array.from({ length: 200 }, (_, i) => entry(`decoy_${i}`, [1, 0.001 * i, 0, 0], { status: "retired" }));
      const wanted = Array.from({ length: 6 }, (_, i) => entry(`wanted_${i}`, [-0.1 * i, 1, 0, 0]));
      await index.upsert([...decoys, ...wanted]);
      const hits = await index.search(unit([1, 0, 0, 0]), { limit: 5, filter: { statuses: ["active"] } });
      expect(hits).toHaveLength(5);
      expect(hits.every((hit) => hit.id.startsWith("wanted_"))).toBe(true);
      expect(ids(hits)).toEqual(["wanted_0", "wanted_1", "wanted_2", "wanted_3", "wanted_4"]);
      expect(await index.count()).toBe(206);
    });

    it("keeps its data when ensure is called again with the same dimensions", async () => {
      await index.upsert([entry("a", [1, 0, 0, 0])]);
      await index.ensure(4);
      expect(await index.count()).toBe(1);
    });

    it("lists every id, and scans every entry with its vector and payload, a batch at a time", async () => {
      await index.upsert([
        entry("b", [0, 1, 0, 0], { owner: "bob", visibility: "private", status: "degraded" }),
        entry("a", [1, 0, 0, 0]),
        entry("c", [0, 0, 1, 0]),
      ]);
      expect((await index.ids()).sort()).toEqual(["a", "b", "c"]);
      const batches: VectorIndexEntry[][] = [];
      for await (const batch of index.scan(2)) batches.push(batch);
      expect(batches.every((batch) => batch.length <= 2)).toBe(true);
      const scanned = batches.flat().sort((x, y) => x.id.localeCompare(y.id));
      expect(scanned.map((e) => e.id)).toEqual(["a", "b", "c"]);
      expect(scanned[1]?.payload).toMatchObject({ owner: "bob", visibility: "private", status: "degraded" });
      expect(Array.from(scanned[1]?.vector ?? []).map((v) => Math.round(v * 1000) / 1000)).toEqual([0, 1, 0, 0]);
    });

    it(
      onNewDimensions === "start-over"
        ? "starts over when ensure is called with new dimensions (the embedder changed)"
        : "refuses new dimensions and keeps its data",
      async () => {
        await index.upsert([entry("a", [1, 0, 0, 0]), entry("b", [0, 1, 0, 0])]);
        if (onNewDimensions === "refuse") {
          await expect(index.ensure(6)).rejects.toMatchObject({ reason: "incompatible" });
          expect(await index.count()).toBe(2);
          return;
        }
        await index.ensure(6);
        expect(await index.count()).toBe(0);
        await index.upsert([entry("c", [0, 0, 0, 0, 1, 0])]);
        expect(await index.search(unit([0, 0, 0, 0, 1, 0]), { limit: 5 })).toEqual([{ id: "c", score: expect.closeTo(1, 4) }]);
        await expect(index.upsert([entry("d", [1, 0, 0, 0])])).rejects.toBeInstanceOf(SkillEngineError);
        await expect(index.search(unit([1, 0, 0, 0]), { limit: 5 })).rejects.toBeInstanceOf(SkillEngineError);
      },
    );

    it("routes an entry to every grantee's audience too, once per entry, in one search (docs/routing.md#scoping)", async () => {
      const bob = agentAudience("bob");
      const carol = agentAudience("carol");
      const user = userAudience("u-1");
      await index.upsert([
        entry("granted", [1, 0, 0, 0], { owner: "alice", visibility: "internal", grantAudiences: [bob, user] }),
        entry("near", [0.9, 0.1, 0, 0], { owner: "alice", visibility: "internal", grantAudiences: [bob, user] }),
        entry("bobs", [0.8, 0.2, 0, 0], { owner: "bob", visibility: "private" }),
        entry("other", [0.7, 0.3, 0, 0], { owner: "dave", visibility: "private" }),
      ]);
      const query = unit([1, 0, 0, 0]);
      const scoped = async (limit: number, ...audiences: string[]): Promise<string[]> =>
        ids(await index.search(query, { limit, filter: { statuses: ["active"], audiences: [PUBLIC_AUDIENCE, ...audiences] } }));
      expect(await scoped(10, agentAudience("alice"))).toEqual(["granted", "near"]);
      // Bob acting for user u-1 matches both of an entry's grants, and still gets each entry once.
      expect(await scoped(10, bob, user)).toEqual(["granted", "near", "bobs"]);
      expect(await scoped(2, bob, user)).toEqual(["granted", "near"]);
      expect(await scoped(10, carol, user)).toEqual(["granted", "near"]);
      expect(await scoped(10, carol)).toEqual([]);
      // Unfiltered (an admin's search): each entry once.
      expect(ids(await index.search(query, { limit: 10 }))).toEqual(["granted", "near", "bobs", "other"]);
      expect(await index.count()).toBe(4);
      expect((await index.ids()).sort()).toEqual(["bobs", "granted", "near", "other"]);
      // A grant revoked: the entry leaves that audience and nothing else changes.
      await index.upsert([entry("granted", [1, 0, 0, 0], { owner: "alice", visibility: "internal", grantAudiences: [user] })]);
      expect(await scoped(10, bob)).toEqual(["near", "bobs"]);
      expect(await scoped(10, carol, user)).toEqual(["granted", "near"]);
      const scanned = (await collect(index.scan(10))).find((e) => e.id === "granted");
      expect(scanned?.payload.grantAudiences).toEqual([user]);
      expect(await index.count()).toBe(4);
      await index.remove(["near"]);
      expect(await scoped(10, bob, user)).toEqual(["granted", "bobs"]);
      expect(await index.count()).toBe(3);
    });

    it("counts entries", async () => {
      await index.upsert(Array.from({ length: 7 }, (_, i) => entry(`s${i}`, [1, i, 0, 0])));
      expect(await index.count()).toBe(7);
      await index.remove(["s0", "s1"]);
      expect(await index.count()).toBe(5);
    });
  });
}

function entry(id: string, vector: number[], payload: Partial<SkillIndexPayload> = {}): VectorIndexEntry {
  return {
    id,
    vector: unit(vector),
    payload: { type: SKILL_PAYLOAD_TYPE, name: id, owner: "alice", visibility: "public", status: "active", ...payload },
  };
}

/** L2-normalizes, as the embedder does before anything reaches an index. */
export function unit(values: number[]): Float32Array {
  const norm = Math.hypot(...values) || 1;
  return Float32Array.from(values, (value) => value / norm);
}

function dot(a: Float32Array, b: Float32Array): number {
  return a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
}

function ids(hits: ReadonlyArray<{ id: string }>): string[] {
  return hits.map((hit) => hit.id);
}

async function collect(batches: AsyncIterable<VectorIndexEntry[]>): Promise<VectorIndexEntry[]> {
  const all: VectorIndexEntry[] = [];
  for await (const batch of batches) all.push(...batch);
  return all;
}
