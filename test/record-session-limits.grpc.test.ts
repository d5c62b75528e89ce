import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { status } from "@grpc/grpc-js";
import Database from "better-sqlite3";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { CandidateStatus, type ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { LearningService, sessionWindows, shapeOf } from "../src/learning/index.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789", carol: "carol-token-0123456789" };
/** Small, so a few sessions go past it (docs/learning.md#pattern-quota). */
const QUOTA = 5;

/** Calls of the given tools, each with values of its own (values never count). */
const calls = (tools: string[], seed: number): ToolCall[] =>
  tools.map((tool, i) => ({ tool, arguments: JSON.stringify({ v: seed * 100 + i }) }));
/** The patterns (3-call windows, as the engine is configured) of a list of tools. */
const hashesOf = (tools: string[]): string[] =>
  sessionWindows(
    tools.map((tool) => ({ tool, shape: shapeOf({ v: 0 }) })),
    3,
    3,
  ).map((w) => w.hash);
/** Waits until the clock moves on, so two sessions recorded one after the other are never last seen at the same instant. */
async function nextMillisecond(): Promise<void> {
  const now = Date.now();
  while (Date.now() === now) await sleep(1);
}

describe("RecordSession's limits, pattern quota and large sessions, through a real server and SQLite file", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  let carol: TestClient;

  const record = (client: TestClient, sessionKey: string, toolCalls: ToolCall[]) =>
    client.call(client.raw.recordSession, { sessionKey, toolCalls }, 300_000);
  /** An agent's stored patterns, read from registry.db directly. */
  const storedPatterns = (agent: string): string[] => {
    const db = new Database(path.join(engine.home, "registry.db"), { readonly: true });
    try {
      return db
        .prepare<[string], { hash: string }>("SELECT hash FROM learning_patterns WHERE agent_id = ?")
        .all(agent)
        .map((r) => r.hash)
        .sort();
    } finally {
      db.close();
    }
  };

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},carol=${TOKENS.carol}`,
        SKILL_ENGINE_PATTERN_MAX_LENGTH: "3",
        SKILL_ENGINE_PATTERNS_PER_AGENT: String(QUOTA),
      },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    carol = connect(engine.app.port, TOKENS.carol);
  }, 120_000);

  afterEach(() => {
    vi.restoreAllMocks();
  });

  afterAll(async () => {
    alice?.close();
    bob?.close();
    carol?.close();
    await engine?.dispose();
  });

  it("refuses a session over the tool-call or byte limit with INVALID_ARGUMENT naming the limit, storing nothing", async () => {
    const tooMany = Array.from({ length: 10_001 }, (_, i) => ({ tool: "t", arguments: `{"i":${i}}` }));
    const refusedCalls = await rpcError(record(alice, "too-many", tooMany));
    expect(refusedCalls.code).toBe(status.INVALID_ARGUMENT);
    expect(refusedCalls.details).toBe("tool_calls: has 10001 calls; the session size limit is 10000 tool calls a session");

    // 40 calls of 60,000 characters: each under the 64 KiB of one call, 2.4 MB together.
    const tooBig = Array.from({ length: 40 }, (_, i) => ({ tool: `t${i}`, arguments: JSON.stringify({ text: "x".repeat(59_980) }) }));
    const refusedBytes = await rpcError(record(alice, "too-big", tooBig));
    expect(refusedBytes.code).toBe(status.INVALID_ARGUMENT);
    expect(refusedBytes.details).toMatch(
      /^tool_calls: are \d+ bytes of tool names and arguments; the session size limit is 2097152 bytes a session$/,
    );
    expect(storedPatterns("alice")).toEqual([]);
  }, 120_000);

  it("refuses arguments nested 10,000 deep with INVALID_ARGUMENT naming the depth rule, not INTERNAL", async () => {
    const deep = `${'{"a":'.repeat(9_999)}{}${"}".repeat(9_999)}`;
    const refused = await rpcError(record(alice, "deep", [...calls(["a", "b"], 1), { tool: "c", arguments: deep }]));
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(refused.details).toBe(
      "tool_calls[2].arguments: nests objects and arrays more than 64 levels deep; the argument depth limit is 64 levels",
    );
    // 64 levels are allowed.
    const atLimit = `${'{"a":'.repeat(63)}{}${"}".repeat(63)}`;
    const recorded = await record(bob, "at-the-depth-limit", [...calls(["a", "b"], 1), { tool: "c", arguments: atLimit }]);
    expect(recorded.toolCalls).toBe(3);
  }, 120_000);

  it("keeps an agent to its pattern quota: the oldest go first and, of those last seen together, the least frequent; another agent's stay", async () => {
    const bobBefore = storedPatterns("bob");
    // Bob's patterns are older than all of alice's: an eviction that ignored the agent would take them first.
    await record(bob, "bob-mon", calls(["p", "q", "r", "s"], 1));
    const bobPatterns = [...new Set([...bobBefore, ...hashesOf(["p", "q", "r", "s"])])].sort();
    expect(storedPatterns("bob")).toEqual(bobPatterns);

    const [abc, bcd] = hashesOf(["a", "b", "c", "d"]) as [string, string];
    const [, bce] = hashesOf(["a", "b", "c", "e"]) as [string, string];
    const [xyz, yzw] = hashesOf(["x", "y", "z", "w"]) as [string, string];
    const [pqr, qrs] = hashesOf(["p", "q", "r", "s"]) as [string, string];
    const sessions: Array<[string, string[]]> = [
      ["mon", ["a", "b", "c", "d"]], // abc, bcd
      ["tue", ["a", "b", "c", "e"]], // abc (now 2 sessions), bce
      ["wed", ["x", "y", "z", "w"]], // xyz, yzw: 5 patterns, the quota
      ["thu", ["p", "q", "r", "s"]], // pqr, qrs: 2 over; bcd (last seen Monday) goes, then of Tuesday's bce (1 session), not abc (2)
    ];
    for (const [i, [key, tools]] of sessions.entries()) {
      await nextMillisecond();
      await record(alice, key, calls(tools, i + 1));
      expect(storedPatterns("alice").length).toBeLessThanOrEqual(QUOTA);
    }
    expect(storedPatterns("alice")).toEqual([abc, xyz, yzw, pqr, qrs].sort());
    expect(storedPatterns("alice")).not.toContain(bcd);
    expect(storedPatterns("alice")).not.toContain(bce);
    expect(storedPatterns("bob")).toEqual(bobPatterns);

    // The frequent pattern kept its count: one more session makes it a candidate (3 sessions).
    await nextMillisecond();
    const third = await record(alice, "fri", calls(["a", "b", "c"], 9));
    expect(third.candidates.map((c) => [c.hash, c.occurrences])).toEqual([[abc, 3]]);
    const listed = await alice.call(alice.raw.listCandidates, { status: CandidateStatus.CANDIDATE_STATUS_CANDIDATE });
    expect(listed.candidates.map((c) => c.hash)).toEqual([abc]);
  }, 120_000);

  it("answers another agent's call while a large allowed session is being recorded, and records that session whole", async () => {
    // Observed, not replaced: the moment the service starts on the session (the whole request has
    // arrived and been decoded), so the other call surely goes in while the session is processed.
    const recordSession = LearningService.prototype.recordSession;
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    vi.spyOn(LearningService.prototype, "recordSession").mockImplementation(function (this: LearningService, ...args) {
      started();
      return recordSession.apply(this, args);
    });
    const tools = Array.from({ length: 40 }, (_, i) => `tool_${i}`);
    // 10,000 calls (the limit), the tools in a scrambled order: thousands of new patterns.
    const large = Array.from({ length: 10_000 }, (_, i) => ({
      tool: tools[(Math.imul(i + 1, 2_654_435_761) >>> 16) % tools.length] as string,
      arguments: JSON.stringify({ n: i, text: "value" }),
    }));
    const answered: string[] = [];
    const recording = record(carol, "large", large).then((response) => {
      answered.push("RecordSession");
      return response;
    });
    await handlerStarted;
    const who = await bob.call(bob.raw.whoAmI, {}, 120_000);
    answered.push("WhoAmI");
    const recorded = await recording;

    expect(who.agentId).toBe("bob");
    expect(answered).toEqual(["WhoAmI", "RecordSession"]);
    expect(recorded.toolCalls).toBe(10_000);
    expect(recorded.alreadyRecorded).toBe(false);
    // Recorded whole: again, it adds nothing and says so; the agent kept its quota.
    const again = await record(carol, "large", large);
    expect(again.alreadyRecorded).toBe(true);
    expect(storedPatterns("carol")).toHaveLength(QUOTA);
  }, 300_000);
});
