import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteVecIndex } from "./sqlite-vec-index.js";
import { agentAudience, PUBLIC_AUDIENCE, SKILL_PAYLOAD_TYPE, type SkillIndexPayload, type VectorIndexEntry } from "./vector-index.js";

/**
 * The approximate path of the embedded index (docs/routing.md#approximate-search) against the
 * exact one, over the same table in a real SQLite file. The library is larger than the candidates
 * the sketch re-ranks, so every search here really is approximate.
 */
const DIMENSIONS = 96;
const CLUSTERS = 60;
const ENTRIES = 6_000;
const CANDIDATES = 400;
const ROUTABLE = { statuses: ["active", "degraded"] };

describe("SqliteVecIndex, approximate path", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function tempFile(): string {
    const dir = mkdtempSync(join(tmpdir(), "sqlite-vec-approximate-"));
    dirs.push(dir);
    return join(dir, "registry.db");
  }

  /** The library written through an exact index, then the same file opened both ways. */
  async function library(
    entries: readonly VectorIndexEntry[],
  ): Promise<{ db: Database.Database; exact: SqliteVecIndex; approximate: SqliteVecIndex }> {
    const file = tempFile();
    const writer = new Database(file);
    writer.pragma("journal_mode = WAL");
    const exact = new SqliteVecIndex(writer, { approximateFrom: Number.POSITIVE_INFINITY });
    await exact.ensure(DIMENSIONS);
    for (let i = 0; i < entries.length; i += 1_000) await exact.upsert(entries.slice(i, i + 1_000));
    const approximate = new SqliteVecIndex(writer, { approximateFrom: ENTRIES / 2, sketch: { candidates: CANDIDATES } });
    await approximate.ensure(DIMENSIONS);
    return { db: writer, exact, approximate };
  }

  it("finds at least 98% of the exact top 5, with exact scores", async () => {
    const space = clusteredSpace(1);
    const { db, exact, approximate } = await library(space.entries(ENTRIES, () => ({})));
    expect(approximate.approximate).toBe(true);
    expect(exact.approximate).toBe(false);
    let found = 0;
    const queries = Array.from({ length: 100 }, () => space.query());
    for (const query of queries) {
      const truth = await exact.search(query, { limit: 5, filter: ROUTABLE });
      const hits = await approximate.search(query, { limit: 5, filter: ROUTABLE });
      expect(hits).toHaveLength(5);
      const expected = new Map(truth.map((hit) => [hit.id, hit.score]));
      for (const hit of hits) {
        const score = expected.get(hit.id);
        if (score === undefined) continue;
        found++;
        expect(hit.score).toBeCloseTo(score, 4);
      }
    }
    expect(found / (queries.length * 5)).toBeGreaterThanOrEqual(0.98);
    db.close();
  });

  it("applies the audience filter inside the search: a caller's few skills come back however many others crowd the query", async () => {
    const space = clusteredSpace(2);
    const others = space.entries(ENTRIES, (i) => ({ owner: `agent-${i % 50}`, visibility: "private" }));
    // The caller's skills and one granted to it, all far from where the queries land.
    const own = Array.from({ length: 4 }, (_, i) => entryOf(`own_${i}`, space.far(i), { owner: "me", visibility: "private" }));
    const granted = entryOf("granted", space.far(9), { owner: "agent-3", visibility: "internal", grantAudiences: [agentAudience("me")] });
    const { db, exact, approximate } = await library([...others, ...own, granted]);
    const filter = { ...ROUTABLE, audiences: [PUBLIC_AUDIENCE, agentAudience("me")] };
    for (let q = 0; q < 20; q++) {
      const query = space.query();
      const hits = await approximate.search(query, { limit: 5, filter });
      expect(hits.map((hit) => hit.id).sort()).toEqual(["granted", "own_0", "own_1", "own_2", "own_3"]);
      const truth = await exact.search(query, { limit: 5, filter });
      expect(hits.map((hit) => hit.id)).toEqual(truth.map((hit) => hit.id));
      hits.forEach((hit, i) => expect(hit.score).toBeCloseTo(truth[i]?.score ?? Number.NaN, 5));
    }
    expect(await approximate.search(space.query(), { limit: 5, filter: { ...ROUTABLE, audiences: [agentAudience("nobody")] } })).toEqual(
      [],
    );
    db.close();
  });

  it("is derived from the file: reopened, it answers as before, grants included", async () => {
    const space = clusteredSpace(3);
    const entries = space.entries(ENTRIES, (i) =>
      i % 10 === 0 ? { visibility: "public" } : { owner: `agent-${i % 7}`, visibility: "private" },
    );
    const granted = entryOf("granted", space.far(1), { owner: "agent-1", visibility: "private", grantAudiences: [agentAudience("me")] });
    const { db, approximate } = await library([...entries, granted]);
    const filter = { ...ROUTABLE, audiences: [PUBLIC_AUDIENCE, agentAudience("agent-3"), agentAudience("me")] };
    const queries = Array.from({ length: 10 }, () => space.query());
    const before = await Promise.all(queries.map((query) => approximate.search(query, { limit: 10, filter })));
    db.close();

    const again = new Database(db.name);
    const reopened = new SqliteVecIndex(again, { approximateFrom: ENTRIES / 2, sketch: { candidates: CANDIDATES } });
    await reopened.ensure(DIMENSIONS);
    expect(reopened.approximate).toBe(true);
    expect(await Promise.all(queries.map((query) => reopened.search(query, { limit: 10, filter })))).toEqual(before);
    const onlyGranted = await reopened.search(space.far(1), { limit: 3, filter: { ...ROUTABLE, audiences: [agentAudience("me")] } });
    expect(onlyGranted.map((hit) => hit.id)).toEqual(["granted"]);
    again.close();
  });

  it("forgets removed entries and follows updates, in step with the table", async () => {
    const space = clusteredSpace(4);
    const { db, exact, approximate } = await library(space.entries(ENTRIES, () => ({})));
    const query = space.query();
    const top = await approximate.search(query, { limit: 20, filter: ROUTABLE });
    const gone = top.slice(0, 10).map((hit) => hit.id);
    // Removed through the approximate index (the service's only writer), then checked both ways.
    await approximate.remove([...gone, "never_there"]);
    expect(await approximate.count()).toBe(ENTRIES - 10);
    const after = await approximate.search(query, { limit: 20, filter: ROUTABLE });
    expect(after.some((hit) => gone.includes(hit.id))).toBe(false);
    expect(after.slice(0, 5).map((hit) => hit.id)).toEqual(
      (await exact.search(query, { limit: 5, filter: ROUTABLE })).map((hit) => hit.id),
    );
    // A status change moves an entry out of the routable set; a new vector moves it in space.
    const [first] = after;
    const moved = entryOf(first?.id ?? "", space.far(2), {});
    await approximate.upsert([{ ...entryOf(after[1]?.id ?? "", space.vectorOf(after[1]?.id ?? ""), { status: "retired" }) }, moved]);
    const again = await approximate.search(query, { limit: 20, filter: ROUTABLE });
    expect(again.map((hit) => hit.id)).not.toContain(after[1]?.id);
    expect((await approximate.search(space.far(2), { limit: 1, filter: ROUTABLE }))[0]?.id).toBe(first?.id);
    expect(await approximate.count()).toBe(ENTRIES - 10);
    db.close();
  });
});

function entryOf(id: string, vector: Float32Array, payload: Partial<SkillIndexPayload>): VectorIndexEntry {
  return { id, vector, payload: { type: SKILL_PAYLOAD_TYPE, name: id, owner: "me", visibility: "public", status: "active", ...payload } };
}

/**
 * Unit vectors around CLUSTERS random centres (like sentence embeddings: topics, and texts near
 * them), all offset by one shared direction (embeddings are far from centred), deterministic.
 */
function clusteredSpace(seed: number) {
  const random = prng(seed);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
  const shared = Float32Array.from({ length: DIMENSIONS }, () => gauss() * 0.6);
  const centres = Array.from({ length: CLUSTERS }, () => Float32Array.from({ length: DIMENSIONS }, () => gauss()));
  const around = (centre: Float32Array, spread: number): Float32Array =>
    normalise(Float32Array.from(centre, (value, d) => value + (shared[d] as number) + spread * gauss()));
  const vectors = new Map<string, Float32Array>();
  return {
    entries(count: number, payload: (i: number) => Partial<SkillIndexPayload>): VectorIndexEntry[] {
      return Array.from({ length: count }, (_, i) => {
        const vector = around(centres[i % CLUSTERS] as Float32Array, 0.8);
        vectors.set(`skill_${i}`, vector);
        return entryOf(`skill_${i}`, vector, payload(i));
      });
    },
    query: (): Float32Array => around(centres[Math.floor(random() * CLUSTERS)] as Float32Array, 0.8),
    /** Opposite to every centre's shared offset: far from where queries land. */
    far: (i: number): Float32Array => normalise(Float32Array.from(shared, (value, d) => -value + (d === i ? 3 : 0))),
    vectorOf: (id: string): Float32Array => vectors.get(id) ?? new Float32Array(DIMENSIONS),
  };
}

function normalise(values: Float32Array): Float32Array {
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

function prng(seed: number): () => number {
  let t = seed >>> 0;
  return () => {
    t += 0x6d2b79f5;
    let r = Math.imul(t ^ (t >>> 15), t | 1);
    r ^= r + Math.imul(r ^ (r >>> 7), r | 61);
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}
