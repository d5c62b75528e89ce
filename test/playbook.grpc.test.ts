import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lesson, LessonScope, LessonState } from "../src/gen/skillengine/v1/playbook.js";
import { connectPlaybook, type TestPlaybookClient } from "./support/playbook-client.js";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const CHALLENGE =
  "Setup: write inventory_report.csv with the columns sku, qty and price for the Lyon warehouse. " +
  "Validator: assert the script prints the total stock value 1234.50 and exits with status zero.";

const CSV_LESSON = {
  trigger: "When parsing CSV files whose quoted fields contain commas or line breaks",
  antiPattern: "Splitting each line on commas by hand.",
  correctPattern: "Use a real CSV parser such as Python's csv module, which understands quoting.",
  domains: ["data", "files"],
  confidence: 0.8,
};

describe("Playbook through gRPC: gates, retrieval by meaning, verification", () => {
  let engine: TestEngine;
  let playbook: TestPlaybookClient;

  beforeAll(async () => {
    engine = await startTestEngine();
    playbook = connectPlaybook(engine.app.port);
  });
  afterAll(async () => {
    playbook?.close();
    await engine?.dispose();
  });

  describe("AddLesson gates", () => {
    it("rejects a lesson that copies 6 consecutive tokens of its challenge, naming the guard and the n-gram", async () => {
      const error = await rpcError(
        playbook.add({
          trigger: "When a validator will assert the script prints the total of something",
          correctPattern: "Compute the total with decimal arithmetic and print it once.",
          challengeText: CHALLENGE,
        }),
      );
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toContain("generalization guard");
      expect(error.details).toContain('"assert the script prints the total"');
    });

    it("accepts a lesson that shares only 5 consecutive tokens with its challenge", async () => {
      const added = await playbook.add({
        trigger: "When the script prints the total of a money column",
        correctPattern: "Sum with decimal arithmetic, not floats, and round once at the end.",
        challengeText: CHALLENGE,
        sourceChallengeHash: "lyon-inventory",
      });
      expect(added.merged).toBe(false);
      expect(added.lesson?.state).toBe(LessonState.LESSON_STATE_ACTIVE);
      // The challenge text is not stored; its hash is.
      expect(added.lesson?.challengeTextHash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(added.lesson)).not.toContain("Lyon warehouse");
    });

    it("checks the correct pattern too", async () => {
      const error = await rpcError(
        playbook.add({
          trigger: "When summing currency amounts read from a file",
          correctPattern: "Print the total stock value 1234.50 and exit.",
          challengeText: CHALLENGE,
        }),
      );
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/^generalization guard: correct_pattern .*"the total stock value 1234 50"/);
    });

    it("checks the anti-pattern too", async () => {
      const error = await rpcError(
        playbook.add({
          trigger: "When summing currency amounts read from a file",
          antiPattern: "Writing inventory_report.csv with the columns sku, qty and price by hand.",
          correctPattern: "Sum with decimal arithmetic and round once at the end.",
          challengeText: CHALLENGE,
        }),
      );
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(/^generalization guard: anti_pattern .*"inventory_report csv with the columns sku"/);
    });

    it("keeps a lesson added without a challenge text as unguarded, and ListLessons says so (docs/playbook.md#gates)", async () => {
      const unguarded = await playbook.add({
        trigger: "When a user asks for dates in a report",
        correctPattern: "Write them as ISO 8601 (YYYY-MM-DD), never in a locale's format.",
        challengeText: "  ",
        source: "user",
      });
      const guarded = await playbook.add({
        trigger: "When reading numbers with thousands separators",
        correctPattern: "Strip the separators before converting, and keep the decimal point.",
        challengeText: CHALLENGE,
      });
      expect(unguarded.lesson).toMatchObject({ guarded: false, verified: false });
      expect(guarded.lesson).toMatchObject({ guarded: true });
      const { lessons } = await playbook.call(playbook.raw.listLessons, {
        scope: LessonScope.LESSON_SCOPE_ALL,
        domain: "",
        limit: 0,
        includeInactive: false,
        owner: "",
      });
      expect(lessons.find((l) => l.id === unguarded.lesson?.id)).toMatchObject({ guarded: false });
      expect(lessons.find((l) => l.id === guarded.lesson?.id)).toMatchObject({ guarded: true });
    });

    it("refuses empty fields, off-taxonomy domains and confidence outside [0, 1], naming the gate", async () => {
      const cases: Array<[Parameters<TestPlaybookClient["add"]>[0], RegExp]> = [
        [{ trigger: "   ", correctPattern: "Do the right thing." }, /^required field: trigger /],
        [{ trigger: "When the task is vague", correctPattern: "" }, /^required field: correct_pattern /],
        [{ trigger: "When baking bread", correctPattern: "Knead longer.", domains: ["cooking"] }, /^domain taxonomy: domains .*"cooking"/],
        [{ trigger: "When baking bread", correctPattern: "Knead longer.", domains: [] }, /^domain taxonomy: domains is empty/],
        [{ trigger: "When unsure", correctPattern: "Ask.", confidence: 1.5 }, /^confidence range: confidence must be in \[0, 1\]/],
        [{ trigger: "When unsure", correctPattern: "Ask.", confidence: -0.1 }, /^confidence range: /],
      ];
      for (const [request, message] of cases) {
        const error = await rpcError(playbook.add(request));
        expect(error.code, JSON.stringify(request)).toBe(status.INVALID_ARGUMENT);
        expect(error.details).toMatch(message);
      }
    });

    it("merges an exact or near-exact duplicate instead of adding it twice", async () => {
      const first = await playbook.add({
        trigger: "When an HTTP API answers 429 Too Many Requests",
        correctPattern: "Back off exponentially and honour the Retry-After header.",
        domains: ["api"],
        confidence: 0.6,
      });
      const again = await playbook.add({
        trigger: "when an http api answers 429 too many requests!",
        correctPattern: "Back off exponentially, and honour the Retry-After header",
        domains: ["web"],
        confidence: 0.7,
      });
      expect(again.merged).toBe(true);
      expect(again.lesson?.id).toBe(first.lesson?.id);
      expect(again.lesson?.timesAdded).toBe(2);
      expect(again.lesson?.frequency).toBe(2);
      expect(again.lesson?.confidence).toBe(0.7);
      expect(again.lesson?.domains).toEqual(["api", "web"]);
      // Near-exact: one word more in ten (word sets ≥ 0.9 alike).
      const near = await playbook.add({
        trigger: "When an HTTP API answers 429 Too Many Requests status",
        correctPattern: "Back off exponentially and honour the Retry-After header.",
        domains: ["api"],
      });
      expect(near.merged).toBe(true);
      expect(near.lesson?.id).toBe(first.lesson?.id);
      expect(near.lesson?.timesAdded).toBe(3);
      const { lessons } = await playbook.call(playbook.raw.listLessons, {
        scope: LessonScope.LESSON_SCOPE_ALL,
        domain: "api",
        limit: 0,
        includeInactive: false,
        owner: "",
      });
      expect(lessons.filter((l) => l.trigger.startsWith("When an HTTP API"))).toHaveLength(1);
    });
  });

  describe("GetPlaybookContext on real embeddings", () => {
    let csv: Lesson;
    beforeAll(async () => {
      csv = (await playbook.add(CSV_LESSON)).lesson as Lesson;
      await playbook.add({
        trigger: "When a shell script deletes files chosen by a glob pattern",
        antiPattern: "Running rm on an unquoted variable.",
        correctPattern: "Quote every variable and list the matches before deleting them.",
        domains: ["shell"],
      });
    });

    it("injects the relevant lesson under the playbook header and counts the retrieval", async () => {
      const found = await playbook.call(playbook.raw.getPlaybookContext, {
        query: "How should I read a CSV file where some quoted values contain commas?",
        limit: 0,
      });
      expect(found.context.startsWith("### SKILL PLAYBOOK:\n")).toBe(true);
      expect(found.context).toContain(`- When: ${CSV_LESSON.trigger}`);
      expect(found.context).toContain(`  Avoid: ${CSV_LESSON.antiPattern}`);
      expect(found.context).toContain(`  Do: ${CSV_LESSON.correctPattern}`);
      expect(found.lessons[0]?.id).toBe(csv.id);
      expect(found.lessons.map((l) => l.id)).not.toContain(undefined);
      expect(found.retrievalId).not.toBe("");
      expect(found.lessons[0]?.retrievals).toBe(1);
    });

    it("answers an empty context for an unrelated query (nothing within cosine distance 0.45)", async () => {
      for (const query of ["What is the capital city of Australia?", "Suggest a good recipe for a chocolate birthday cake."]) {
        const found = await playbook.call(playbook.raw.getPlaybookContext, { query, limit: 5 });
        expect(found.context, query).toBe("");
        expect(found.lessons).toEqual([]);
      }
    });

    it("searches a long user message on its beginning and end, says so, and refuses one over 32,000 characters", async () => {
      // The question, then the pasted file: far beyond the 2,000 characters searched whole.
      const question = "How should I read a CSV file where some quoted values contain commas? Here is the file:\n";
      const rows = Array.from({ length: 800 }, (_, i) => `${i},"Lyon, France","crate ${i}, fragile",${i * 3}\n`).join("");
      const message = (question + rows).slice(0, 20_000);
      const found = await playbook.call(playbook.raw.getPlaybookContext, { query: message, limit: 0 });
      expect(found.lessons[0]?.id).toBe(csv.id);
      expect(found.warnings).toEqual([expect.stringMatching(/^query is 20000 characters, more than the 2000 searched whole: /)]);
      const short = await playbook.call(playbook.raw.getPlaybookContext, { query: "reading a CSV file with quoted commas", limit: 0 });
      expect(short.warnings).toEqual([]);
      const tooLong = await rpcError(playbook.call(playbook.raw.getPlaybookContext, { query: "csv ".repeat(8_001), limit: 0 }));
      expect(tooLong.code).toBe(status.INVALID_ARGUMENT);
      expect(tooLong.details).toBe("query: is 32003 characters; the limit is 32000");
    });

    it("validates the query and the limit", async () => {
      expect((await rpcError(playbook.call(playbook.raw.getPlaybookContext, { query: " ", limit: 0 }))).code).toBe(status.INVALID_ARGUMENT);
      const tooMany = await rpcError(playbook.call(playbook.raw.getPlaybookContext, { query: "csv", limit: 51 }));
      expect(tooMany.code).toBe(status.INVALID_ARGUMENT);
      expect(tooMany.details).toContain("limit");
    });
  });

  describe("VerifyLesson", () => {
    const verify = async (originalPassed: boolean, originalAttempts: number, verifyPassed: boolean, verifyAttempts: number) => {
      const { lesson } = await playbook.add({
        trigger: `When checking verification case ${originalPassed}-${originalAttempts}-${verifyPassed}-${verifyAttempts}`,
        correctPattern: `Record the outcome ${originalAttempts} ${verifyAttempts} honestly.`,
        domains: ["testing"],
      });
      return playbook.call(playbook.raw.verifyLesson, {
        lessonId: lesson?.id ?? "",
        originalPassed,
        originalAttempts,
        verifyPassed,
        verifyAttempts,
      });
    };

    it("verifies only a strict improvement: the four cases", async () => {
      expect((await verify(false, 1, true, 1)).lesson?.verified).toBe(true); // failed → passed
      expect((await verify(true, 3, true, 1)).lesson?.verified).toBe(true); // 3 attempts → first attempt
      expect((await verify(true, 1, true, 1)).lesson?.verified).toBe(false); // nothing to improve
      expect((await verify(true, 3, true, 2)).lesson?.verified).toBe(false); // still needed 2 attempts
      const failedBoth = await verify(false, 1, false, 2);
      expect(failedBoth.lesson?.verified).toBe(false);
      expect(failedBoth.reason).toContain("did not pass");
    });

    it("refuses attempts that cannot be and an unknown lesson", async () => {
      const bad = await rpcError(verify(true, 0, true, 1));
      expect(bad.code).toBe(status.INVALID_ARGUMENT);
      expect(bad.details).toContain("original_attempts");
      const missing = await rpcError(
        playbook.call(playbook.raw.verifyLesson, {
          lessonId: "lsn_nope",
          originalPassed: false,
          originalAttempts: 1,
          verifyPassed: true,
          verifyAttempts: 1,
        }),
      );
      expect(missing.code).toBe(status.NOT_FOUND);
    });
  });

  it("exports lessons by state, retrievals, helpful credits and prunes on /metrics", async () => {
    const { lessons } = await playbook.call(playbook.raw.getPlaybookContext, { query: "reading a CSV file with quoted commas", limit: 1 });
    expect(lessons).toHaveLength(1);
    await playbook.call(playbook.raw.creditRecentRetrievals, { windowSeconds: 0 });
    const text = await (await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`)).text();
    const value = (pattern: RegExp): number => Number(pattern.exec(text)?.[1] ?? Number.NaN);
    const listed = await playbook.call(playbook.raw.listLessons, { scope: 0, domain: "", limit: 0, includeInactive: false, owner: "" });
    // No agent label: identities belong in logs (docs/operations.md#metrics).
    expect(value(/^skill_engine_lessons\{state="active"\} (\d+)$/m)).toBe(listed.lessons.length);
    expect(value(/^skill_engine_lesson_retrievals_total (\d+)$/m)).toBeGreaterThanOrEqual(2);
    expect(value(/^skill_engine_lesson_helpful_credits_total (\d+)$/m)).toBeGreaterThanOrEqual(1);
    expect(value(/^skill_engine_lessons_pruned_total (\d+)$/m)).toBe(0);
  });
});

describe("PruneLessons through gRPC, counted on /metrics", () => {
  let engine: TestEngine;
  let playbook: TestPlaybookClient;

  beforeAll(async () => {
    engine = await startTestEngine();
    playbook = connectPlaybook(engine.app.port);
  });
  afterAll(async () => {
    playbook?.close();
    await engine?.dispose();
  });

  it("counts every lesson a prune archives in skill_engine_lessons_pruned_total, and none a dry run names", async () => {
    const pruned = async (): Promise<number> => {
      const text = await (await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`)).text();
      return Number(/^skill_engine_lessons_pruned_total (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
    };
    // Two lessons with one trigger (different advice): one query shows both, neither is ever helpful.
    const trigger = "When a log file on a busy server grows without bound";
    for (const correctPattern of [
      "Rotate it by size with logrotate and keep a few compressed copies.",
      "Send the lines to journald and cap its disk use.",
    ]) {
      await playbook.add({ trigger, correctPattern, domains: ["shell"] });
    }
    const shown = await playbook.call(playbook.raw.getPlaybookContext, { query: trigger, limit: 5 });
    expect(shown.lessons).toHaveLength(2);
    const prune = (dryRun: boolean) =>
      playbook.call(playbook.raw.pruneLessons, { minRetrievals: 1, maxDropFraction: 1, hasMaxDropFraction: true, dryRun });

    expect((await prune(true)).dropped).toHaveLength(2);
    expect(await pruned()).toBe(0);
    const archived = await prune(false);
    expect(archived.dropped.map((l) => l.state)).toEqual([LessonState.LESSON_STATE_ARCHIVED, LessonState.LESSON_STATE_ARCHIVED]);
    expect(await pruned()).toBe(2);
  });
});
