import { rm } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { GetPlaybookContextResponse } from "../src/gen/skillengine/v1/playbook.js";
import { connectPlaybook, type TestPlaybookClient } from "./support/playbook-client.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** The service's debug log lines "lesson retrieved", which carry each shown lesson's cosine distance. */
class RetrievalLog {
  private readonly distances = new Map<string, Map<string, number>>();
  write(chunk: string): void {
    for (const line of chunk.split("\n")) {
      if (!line.includes('"lesson retrieved"')) continue;
      const entry = JSON.parse(line) as { retrievalId?: string; lesson?: string; distance?: number };
      if (entry.retrievalId === undefined || entry.lesson === undefined) continue;
      const byLesson = this.distances.get(entry.retrievalId) ?? new Map<string, number>();
      byLesson.set(entry.lesson, entry.distance ?? Number.NaN);
      this.distances.set(entry.retrievalId, byLesson);
    }
  }
  of(found: GetPlaybookContextResponse): Map<string, number> {
    return this.distances.get(found.retrievalId) ?? new Map();
  }
}

/**
 * GetPlaybookContext's rules through the real server and embedder (docs/playbook.md#retrieval): the
 * cosine-distance cut (0.45 by default) at its boundary, the BM25 re-rank, the top-5 cut.
 */
describe("GetPlaybookContext: the distance boundary, the BM25 re-rank and the top-5 cut", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let engine: TestEngine | undefined;
  let playbook: TestPlaybookClient | undefined;
  const log = new RetrievalLog();

  const start = async (maxDistance?: string): Promise<TestPlaybookClient> => {
    playbook?.close();
    await engine?.stop();
    engine = await startTestEngine({
      dirs,
      env: { SKILL_ENGINE_LOG_LEVEL: "debug", ...(maxDistance === undefined ? {} : { SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE: maxDistance }) },
      logs: log,
    });
    playbook = connectPlaybook(engine.app.port);
    return playbook;
  };
  const context = (client: TestPlaybookClient, query: string, limit = 0) => client.call(client.raw.getPlaybookContext, { query, limit });

  beforeAll(async () => {
    dirs = await makeDirs();
  });
  afterAll(async () => {
    playbook?.close();
    await engine?.stop();
    await rm(dirs.root, { recursive: true, force: true });
  });

  it("keeps a lesson strictly below the configured distance and drops it at or above it", async () => {
    // Everything qualifies at distance 2: read the lesson's real distance to the query.
    let client = await start("2");
    const lesson = (
      await client.add({
        trigger: "When a scheduled job runs twice because two servers both fire the cron entry",
        correctPattern: "Take a lock (a database row or a lease) before the job starts, and skip the run when it is held.",
        domains: ["planning"],
      })
    ).lesson;
    const query = "our nightly report is sent twice, what can we do";
    const everything = await context(client, query);
    const distance = log.of(everything).get(lesson?.id ?? "");
    expect(distance).toBeGreaterThan(0);
    expect(distance).toBeLessThan(2);
    const d = distance as number;
    client = await start(String(d + 1e-6));
    expect((await context(client, query)).lessons.map((l) => l.id)).toEqual([lesson?.id]);
    client = await start(String(d - 1e-6));
    expect((await context(client, query)).lessons).toEqual([]);
    expect((await context(client, query)).context).toBe("");
  });

  it("re-ranks the lessons within the distance by BM25: a keyword match lifts a lesson over a closer one", async () => {
    const client = await start();
    // Vectors embed the trigger alone; BM25 reads every field. A's trigger is the closer one, but no
    // word of A matches the query; B's advice names the library and the call the query names.
    const a = (
      await client.add({
        trigger: "When grouping rows of a DataFrame is slow",
        correctPattern: "Aggregate with vectorised column operations instead of looping row by row.",
        domains: ["data"],
      })
    ).lesson;
    const b = (
      await client.add({
        trigger: "When DataFrame aggregations are slow",
        correctPattern: "In pandas, call groupby with observed=True for categorical keys and avoid apply with Python lambdas.",
        domains: ["data"],
      })
    ).lesson;
    const found = await context(client, "pandas groupby on a big table takes forever");
    const distances = log.of(found);
    // By distance alone A comes first; the keyword list lifts B over it (reciprocal rank fusion).
    expect(distances.get(a?.id ?? "")).toBeLessThan(distances.get(b?.id ?? "") ?? 0);
    expect(distances.get(b?.id ?? "")).toBeLessThan(0.45);
    expect(found.lessons.slice(0, 2).map((l) => l.id)).toEqual([b?.id, a?.id]);
  });

  it("injects at most 5 lessons by default, the best first", async () => {
    const client = await start();
    const topics = [
      "When a Python script reads a large CSV file",
      "When a Python script parses a CSV file with quoted fields",
      "When a Python script writes a CSV file for Excel users",
      "When a Python script reads a CSV file in another encoding",
      "When a Python script filters rows of a CSV file",
      "When a Python script merges two CSV files",
      "When a Python script sorts a CSV file by a column",
    ];
    for (const [i, trigger] of topics.entries()) {
      await client.add({ trigger, correctPattern: `Use the csv module; variant ${i} of the advice.`, domains: ["files"] });
    }
    const found = await context(client, "Python script that processes a CSV file");
    expect(found.lessons).toHaveLength(5);
    expect(found.context.match(/^- When: /gm)).toHaveLength(5);
    const more = await context(client, "Python script that processes a CSV file", 7);
    expect(more.lessons.length).toBeGreaterThan(5);
    expect(found.lessons.map((l) => l.id)).toEqual(more.lessons.slice(0, 5).map((l) => l.id));
  });
});
