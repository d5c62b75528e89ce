import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LearningStore, sessionHashKey } from "./learning-store.js";
import { migrateRegistry } from "../schema/index.js";

/** A pattern hash (32 hex characters) from a small number. */
const h = (n: number): string => n.toString(16).padStart(32, "0");
const patterns = (db: Database.Database, agent: string): string[] =>
  db
    .prepare<[string], { hash: string }>("SELECT hash FROM learning_patterns WHERE agent_id = ? ORDER BY hash")
    .all(agent)
    .map((r) => r.hash);

describe("the learning store's pattern quota and session sets (real SQLite)", () => {
  let db: Database.Database;
  let store: LearningStore;

  beforeEach(() => {
    db = new Database(":memory:");
    migrateRegistry(db);
    store = new LearningStore(db);
  });
  afterEach(() => db.close());

  it("evicts the patterns last seen longest ago first and, of those seen together, the least frequent; never a candidate's; never another agent's", () => {
    // Monday: 1..4 once each, 5 in two sessions. Tuesday: 1 again, 6 new. Wednesday: 7 new.
    store.countSessionSlice("a", "mon-1", [h(1), h(2), h(3), h(4), h(5)], "2026-01-05T10:00:00.000Z");
    store.countSessionSlice("a", "mon-2", [h(5)], "2026-01-05T10:00:00.000Z");
    store.countSessionSlice("a", "tue", [h(1), h(6)], "2026-01-06T10:00:00.000Z");
    store.countSessionSlice("a", "wed", [h(7)], "2026-01-07T10:00:00.000Z");
    store.countSessionSlice("b", "mon", [h(2), h(3), h(4)], "2026-01-01T10:00:00.000Z");
    // Pattern 2 is one of a's candidates: its count is the candidate's, so it stays.
    store.insertCandidate({
      agentId: "a",
      hash: h(2),
      name: "auto_x",
      description: "d",
      toolSequence: [
        { tool: "x", shape: "{}" },
        { tool: "y", shape: "{}" },
        { tool: "z", shape: "{}" },
      ],
      sessionKeys: ["mon-1"],
      occurrences: 1,
      exampleArguments: [{}, {}, {}],
      at: "2026-01-05T10:00:00.000Z",
    });
    expect(store.patternCount("a")).toBe(7);

    // Oldest (Monday) first; of Monday's, the ones seen once (3, 4) before 5 (twice); 2 is kept.
    expect(store.evictPatterns("a", 2)).toBe(2);
    expect(patterns(db, "a")).toEqual([h(1), h(2), h(5), h(6), h(7)]);
    expect(store.evictPatterns("a", 1)).toBe(1);
    expect(patterns(db, "a")).toEqual([h(1), h(2), h(6), h(7)]);
    // Tuesday's next: 1 was seen in two sessions, 6 in one.
    expect(store.evictPatterns("a", 1)).toBe(1);
    expect(patterns(db, "a")).toEqual([h(1), h(2), h(7)]);
    expect(store.evictPatterns("a", 10)).toBe(2);
    expect(patterns(db, "a")).toEqual([h(2)]);
    // Only the candidate's pattern is left, and it is never evicted.
    expect(store.evictPatterns("a", 10)).toBe(0);
    expect(patterns(db, "b")).toEqual([h(2), h(3), h(4)]);
  });

  it("answers each pattern's count as it counts a slice, and keeps a session's set across slices and the older one-row form", () => {
    expect(store.countSessionSlice("a", "s1", [h(1), h(2)], "2026-01-05T10:00:00.000Z")).toEqual(
      new Map([
        [h(1), 1],
        [h(2), 1],
      ]),
    );
    expect(store.countSessionSlice("a", "s2", [h(2)], "2026-01-05T11:00:00.000Z").get(h(2))).toBe(2);
    // Counted but not yet marked recorded (a recording stopped between slices).
    expect(store.session("a", "s1")).toEqual({ recorded: false, hashes: new Set([sessionHashKey(h(1)), sessionHashKey(h(2))]) });
    store.countSessionSlice("a", "s1", [h(3)], "2026-01-05T10:00:00.000Z");
    store.saveSession("a", "s1", 3, "2026-01-05T10:00:00.000Z");
    expect(store.session("a", "s1")).toEqual({
      recorded: true,
      hashes: new Set([h(1), h(2), h(3)].map(sessionHashKey)),
    });
    // A session recorded before parts existed keeps its hashes in its own row; a re-recording adds parts.
    db.prepare("INSERT INTO learning_sessions (agent_id, session_key, hashes, tool_calls, recorded_at) VALUES (?, ?, ?, 3, 'x')").run(
      "a",
      "old",
      Buffer.from(sessionHashKey(h(9)), "hex"),
    );
    store.countSessionSlice("a", "old", [h(10)], "2026-01-05T10:00:00.000Z");
    store.saveSession("a", "old", 4, "2026-01-05T10:00:00.000Z");
    expect(store.session("a", "old")).toEqual({ recorded: true, hashes: new Set([h(9), h(10)].map(sessionHashKey)) });
    expect(store.session("a", "never")).toEqual({ recorded: false, hashes: new Set() });
  });

  it("adds last_seen to a registry from before the quota; its patterns count as the oldest", () => {
    const old = new Database(":memory:");
    try {
      old.exec(`CREATE TABLE learning_patterns (agent_id TEXT NOT NULL, hash TEXT NOT NULL, sessions INTEGER NOT NULL,
                  session_keys TEXT NOT NULL DEFAULT '[]', PRIMARY KEY (agent_id, hash)) WITHOUT ROWID;
                INSERT INTO learning_patterns (agent_id, hash, sessions) VALUES ('a', '${h(1)}', 5);`);
      migrateRegistry(old);
      const upgraded = new LearningStore(old);
      upgraded.countSessionSlice("a", "s", [h(2)], "2026-01-05T10:00:00.000Z");
      expect(upgraded.evictPatterns("a", 1)).toBe(1);
      expect(patterns(old, "a")).toEqual([h(2)]);
    } finally {
      old.close();
    }
  });
});
