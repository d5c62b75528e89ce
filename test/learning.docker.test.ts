import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import Database from "better-sqlite3";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rebuildRegistry } from "../src/control/index.js";
import { CandidateStatus, OnDuplicate, type ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const TOKENS = { alice: "alice-token-0123456789", bob: "bob-token-0123456789" };

/** Echoes its payload: every step of a promoted composition succeeds. */
const ECHO = `import json, sys
print(json.dumps({"echo": json.loads(sys.argv[1])}))
`;
const WORDS = `import json, sys
args = json.loads(sys.argv[1])
words = args["text"].split()
print(json.dumps({"count": len(words)}))
`;

const call = (tool: string, args: unknown): ToolCall => ({ tool, arguments: JSON.stringify(args) });
/** A session of the given tools, each with its own values (values never count). */
const session = (tools: string[], seed: number): ToolCall[] =>
  tools.map((tool, i) => call(tool, { text: `value ${seed}-${i}`, n: seed * 10 + i }));

describe("learning from behaviour through a real server, engine and SQLite file", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  const record = (client: TestClient, sessionKey: string, toolCalls: ToolCall[]) =>
    client.call(client.raw.recordSession, { sessionKey, toolCalls });
  const candidates = (client: TestClient, statusFilter = CandidateStatus.CANDIDATE_STATUS_UNSPECIFIED) =>
    client.call(client.raw.listCandidates, { status: statusFilter }).then((r) => r.candidates);
  const register = (client: TestClient, name: string, description = `echoes its payload (${name})`, code = ECHO) =>
    client.register({ name, description, code, testPayload: '{"text": "a", "n": 1}' });

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`,
        SKILL_ENGINE_AUTO_PROMOTE: "on",
        SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4",
      },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
  }, 120_000);

  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  it("three sessions with the same tool sequence (different values) make one candidate with occurrences = 3; a session recorded twice counts once", async () => {
    const tools = ["grep", "sed", "wc"];
    expect((await record(bob, "s1", session(tools, 1))).candidates).toEqual([]);
    await record(bob, "s2", session(tools, 2));
    const again = await record(bob, "s2", session(tools, 2));
    expect(again.alreadyRecorded).toBe(true);
    expect(again.candidates).toEqual([]);
    const third = await record(bob, "s3", session(tools, 3));
    expect(third.candidates).toHaveLength(1);
    const [candidate] = third.candidates;
    expect(candidate?.occurrences).toBe(3);
    expect(candidate?.sessionKeys).toEqual(["s1", "s2", "s3"]);
    expect(candidate?.toolSequence.map((s) => s.tool)).toEqual(tools);
    expect(candidate?.toolSequence[0]?.shape).toBe("{n:number,text:string}");
    // Recording s3 again changes nothing; the table holds one row for the pattern.
    await record(bob, "s3", session(tools, 3));
    const listed = await candidates(bob);
    expect(listed).toHaveLength(1);
    expect(listed[0]?.occurrences).toBe(3);

    // Values never affect the hash: a fourth session with other values touches the same candidate.
    const fourth = await record(bob, "s4", session(tools, 99));
    expect(fourth.candidates.map((c) => [c.id, c.occurrences])).toEqual([[candidate?.id, 4]]);
    // A different shape is a different pattern.
    const shaped = await record(bob, "s5", [
      call("grep", { pattern: "x" }),
      call("sed", { text: "y", n: 1 }),
      call("wc", { text: "z", n: 2 }),
    ]);
    expect(shaped.candidates).toEqual([]);
  });

  it("scopes candidates by agent: alice sees none of bob's and cannot promote or dismiss them", async () => {
    const bobs = await candidates(bob);
    expect(bobs.length).toBeGreaterThan(0);
    expect(await candidates(alice)).toEqual([]);
    const id = bobs[0]?.id ?? 0;
    expect((await rpcError(alice.call(alice.raw.promoteCandidate, { id, name: "", description: "" }))).code).toBe(status.NOT_FOUND);
    expect((await rpcError(alice.call(alice.raw.dismissCandidate, { id }))).code).toBe(status.NOT_FOUND);
    // Alice's own sessions of the same tools start her own count from zero.
    await record(alice, "a1", session(["grep", "sed", "wc"], 1));
    expect(await candidates(alice)).toEqual([]);
  });

  it("auto-promotion leaves a routine of tools that are not skills a candidate; dismissing takes a candidate out", async () => {
    // grep, sed and wc are no skills: auto-promotion (on here) made nothing of it (docs/learning.md#promotion).
    const [candidate] = await candidates(bob);
    expect(candidate?.status).toBe(CandidateStatus.CANDIDATE_STATUS_CANDIDATE);
    const dismissed = await bob.call(bob.raw.dismissCandidate, { id: candidate?.id ?? 0 });
    expect(dismissed.candidate?.status).toBe(CandidateStatus.CANDIDATE_STATUS_DISMISSED);
    expect(await candidates(bob, CandidateStatus.CANDIDATE_STATUS_CANDIDATE)).toEqual([]);
    const again = await rpcError(bob.call(bob.raw.promoteCandidate, { id: candidate?.id ?? 0, name: "", description: "" }));
    expect(again.code).toBe(status.FAILED_PRECONDITION);
    expect(again.details).toContain("is dismissed");
  });

  it("auto-promotion turns a candidate into an auto-created composed skill with its registry row; an 80%-overlap sequence updates it (version 2) instead of creating one", async () => {
    for (const tool of ["t_a", "t_b", "t_c", "t_d", "t_e", "t_f"]) await register(alice, tool);
    const first = ["t_a", "t_b", "t_c", "t_d", "t_e"];
    await record(alice, "p1", session(first, 1));
    await record(alice, "p2", session(first, 2));
    const third = await record(alice, "p3", session(first, 3));
    expect(third.promotedSkills).toHaveLength(1);
    const name = third.promotedSkills[0] as string;
    const promoted = await alice.get(name);
    expect(promoted.composed).toBe(true);
    expect(promoted.skill?.version).toBe(1);
    const stats = await alice.call(alice.raw.getSkillStats, { name });
    expect(stats.autoCreated).toBe(true);
    // The canonical file is there as for any skill (the composed definition).
    expect(await readFile(path.join(engine.home, "memory", "acquired_skills", `${name}.py`), "utf8")).toContain("t_e");
    const db = new Database(path.join(engine.home, "registry.db"), { readonly: true });
    try {
      expect(db.prepare("SELECT auto_created, owner FROM skills WHERE name = ?").get(name)).toEqual({ auto_created: 1, owner: "alice" });
    } finally {
      db.close();
    }
    const [row] = await candidates(alice, CandidateStatus.CANDIDATE_STATUS_PROMOTED);
    expect(row?.skillName).toBe(name);
    expect(row?.promotedAt).not.toBe("");
    const before = (await alice.list()).skills.length;

    // One step changed: LCS 4 of 5 = 0.8 ≥ 0.7.
    const evolved = ["t_a", "t_b", "t_c", "t_d", "t_f"];
    await record(alice, "q1", session(evolved, 1));
    await record(alice, "q2", session(evolved, 2));
    const update = await record(alice, "q3", session(evolved, 3));
    expect(update.promotedSkills).toEqual([name]);
    expect((await alice.list()).skills.length).toBe(before);
    const after = await alice.get(name);
    expect(after.skill?.version).toBe(2);
    expect(after.code).toContain("t_f");
    const history = await alice.call(alice.raw.listSkillEvolution, { name });
    expect(history.events).toHaveLength(1);
    expect(history.events[0]).toMatchObject({ skillName: name, fromVersion: 1, toVersion: 2 });
    expect(history.events[0]?.overlap).toBeCloseTo(0.8);
    expect((await alice.call(alice.raw.getSkillStats, { name })).autoCreated).toBe(true);
  }, 240_000);

  it("explicit outcomes: 5 successes and 15 failures give 25% and deprecation; an outcome overrides an exit-0 invocation", async () => {
    await register(alice, "scored", "a skill judged by its outcomes");
    const ids: string[] = [];
    for (let batch = 0; batch < 5; batch++) {
      const runs = await Promise.all(
        [0, 1, 2, 3].map(() =>
          alice.call(alice.raw.invokeSkill, { name: "scored", payload: "{}", payloadJson: undefined, routeId: "", files: [] }),
        ),
      );
      for (const run of runs) {
        expect(run.result?.success).toBe(true);
        expect(run.invocationId).toMatch(/^\d+$/);
        ids.push(run.invocationId);
      }
    }
    const first = await alice.call(alice.raw.recordSkillOutcome, {
      name: "scored",
      invocationId: ids[0] as string,
      success: false,
      note: "did not help",
    });
    expect(first).toMatchObject({ exitCodeSuccess: true, overridden: true });
    for (const id of ids.slice(1, 15)) {
      await alice.call(alice.raw.recordSkillOutcome, { name: "scored", invocationId: id, success: false, note: "" });
    }
    for (const id of ids.slice(15)) {
      const ok = await alice.call(alice.raw.recordSkillOutcome, { name: "scored", invocationId: id, success: true, note: "" });
      expect(ok.overridden).toBe(false);
    }
    const stats = await alice.call(alice.raw.getSkillStats, { name: "scored" });
    expect(stats.hasSuccessRate).toBe(true);
    expect(stats.successRate).toBeCloseTo(0.25);
    expect(stats.skill?.status).toBe(SkillStatus.SKILL_STATUS_DEPRECATED);
    const explicit = stats.successBySource.find((s) => s.source === "explicit");
    expect(explicit).toMatchObject({ samples: 20, successes: 5 });
    expect(stats.totalSuccesses).toBe(20); // the exit codes themselves are kept as they were

    // Somebody else's invocation, or an unknown one, is NOT_FOUND; a malformed id INVALID_ARGUMENT.
    expect(
      (await rpcError(bob.call(bob.raw.recordSkillOutcome, { name: "t_a", invocationId: ids[0] as string, success: true, note: "" }))).code,
    ).toBe(status.NOT_FOUND);
    expect(
      (await rpcError(alice.call(alice.raw.recordSkillOutcome, { name: "scored", invocationId: "999999", success: true, note: "" }))).code,
    ).toBe(status.NOT_FOUND);
    expect(
      (await rpcError(alice.call(alice.raw.recordSkillOutcome, { name: "scored", invocationId: "x1", success: true, note: "" }))).code,
    ).toBe(status.INVALID_ARGUMENT);
  }, 240_000);

  it("implicit signal: a skill call retried at once with another tool on the same values counts as an implicit failure", async () => {
    const recorded = await record(alice, "retry-1", [call("t_a", { text: "Oslo" }), call("web_search", { q: "Oslo" })]);
    expect(recorded.implicitFailures).toBe(1);
    // Recording it again adds nothing.
    expect((await record(alice, "retry-1", [call("t_a", { text: "Oslo" }), call("web_search", { q: "Oslo" })])).implicitFailures).toBe(0);
    const stats = await alice.call(alice.raw.getSkillStats, { name: "t_a" });
    expect(stats.successBySource.find((s) => s.source === "implicit")).toMatchObject({ samples: 1, successes: 0, weight: 0.5 });
  });

  it("near-duplicates: warned about by default, refused with ALREADY_EXISTS on reject", async () => {
    await alice.register({
      name: "word_count",
      description: "Counts the words in a text and returns the count.",
      code: WORDS,
      testPayload: '{"text": "a b"}',
    });
    const paraphrase = WORDS.replace(/words/g, "tokens").replace('"count"', '"n"');
    const refused = await rpcError(
      alice.register({
        name: "count_words",
        description: "Count the number of words in a text and return how many there are.",
        code: paraphrase,
        testPayload: '{"text": "a b"}',
        onDuplicate: OnDuplicate.ON_DUPLICATE_REJECT,
      }),
    );
    expect(refused.code).toBe(status.ALREADY_EXISTS);
    expect(refused.details).toContain("near-duplicate of word_count: patch word_count instead");
    const warned = await alice.register({
      name: "count_words",
      description: "Count the number of words in a text and return how many there are.",
      code: paraphrase,
      testPayload: '{"text": "a b"}',
    });
    expect(warned.similarSkills[0]).toMatchObject({ name: "word_count", nearDuplicate: true });
    // A different skill that shares words is not a near-duplicate.
    const other = await alice.register({
      name: "char_count",
      description: "Looks up the current exchange rate between two currencies.",
      code: `import json, sys\nprint(json.dumps({"chars": len(json.loads(sys.argv[1])["text"])}))\n`,
      testPayload: '{"text": "a b"}',
      onDuplicate: OnDuplicate.ON_DUPLICATE_REJECT,
    });
    expect(other.similarSkills.filter((s) => s.nearDuplicate)).toEqual([]);
    // The candidates come from the index with the caller's scope inside the search: alice's private
    // skills are not bob's candidates, so his copy is refused by nothing and reports nothing.
    const bobs = await bob.register({
      name: "bob_count_words",
      description: "Count the number of words in a text and return how many there are.",
      code: paraphrase,
      testPayload: '{"text": "a b"}',
      onDuplicate: OnDuplicate.ON_DUPLICATE_REJECT,
    });
    expect(bobs.similarSkills).toEqual([]);
  }, 120_000);

  it("candidates, evolution and outcomes are mirrored in learning.json and come back after a registry rebuild; the near-duplicate screen still finds its candidates", async () => {
    const before = await candidates(alice);
    const evolution = (await alice.call(alice.raw.listSkillEvolution, { name: before.find((c) => c.skillName !== "")?.skillName ?? "" }))
      .events;
    alice.close();
    bob.close();
    await engine.stop();
    const mirror = JSON.parse(await readFile(path.join(engine.home, "memory", "acquired_skills", "learning.json"), "utf8")) as {
      candidates: unknown[];
      outcomes: unknown[];
    };
    expect(mirror.candidates.length).toBeGreaterThan(0);
    expect(mirror.outcomes.length).toBeGreaterThan(0);
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(engine.home, `registry.db${suffix}`), { force: true });
    await rebuildRegistry({ home: engine.home, policy: engine.config.healthPolicy, logger: pino({ level: "silent" }), force: false });
    const dirs = { root: path.dirname(engine.home), home: engine.home, sandboxDir: engine.sandboxDir };
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}` } });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    expect((await candidates(alice)).map((c) => [c.id, c.status, c.occurrences, c.skillName])).toEqual(
      before.map((c) => [c.id, c.status, c.occurrences, c.skillName]),
    );
    const name = before.find((c) => c.skillName !== "")?.skillName ?? "";
    expect((await alice.call(alice.raw.listSkillEvolution, { name })).events).toEqual(evolution);
    const stats = await alice.call(alice.raw.getSkillStats, { name: "scored" });
    expect(stats.successRate).toBeCloseTo(0.25);
    expect(stats.skill?.status).toBe(SkillStatus.SKILL_STATUS_DEPRECATED);

    // After the rebuild the screen finds its candidates through the routing index rebuilt from the
    // registry, and still finds the near-duplicate.
    const again = await alice.register({
      name: "count_words_again",
      description: "Count the number of words in a text and return how many there are.",
      code: WORDS.replace(/words/g, "tokens").replace('"count"', '"n"'),
      testPayload: '{"text": "a b"}',
    });
    expect(again.similarSkills.find((s) => s.name === "word_count")).toMatchObject({ nearDuplicate: true });
  }, 120_000);
});
