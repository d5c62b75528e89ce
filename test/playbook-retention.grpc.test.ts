import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Lesson, LessonScope, LessonState } from "../src/gen/skillengine/v1/playbook.js";
import { connectPlaybook, type TestPlaybookClient } from "./support/playbook-client.js";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const TOKENS =
  "alice=alice-token-0123456789,bob=bob-token-0123456789,pruner=pruner-token-0123456789,capper=capper-token-0123456789,root:admin=root-token-0123456789";
const DAY_MS = 86_400_000;

/** Distinct lessons: different words in trigger and pattern, so none is a near-duplicate of another. */
const TOPICS = [
  "sorting a list of dictionaries",
  "parsing ISO dates with time zones",
  "retrying flaky network calls",
  "reading large JSON files",
  "escaping user input in SQL queries",
  "formatting money amounts",
  "comparing floating point numbers",
  "walking a directory tree recursively",
  "counting words in a document",
  "deduplicating records by key",
];

describe("Playbook credit, prune, cap and isolation through gRPC (an injected clock, no sleeping)", () => {
  let engine: TestEngine;
  let now = Date.UTC(2026, 5, 1, 12, 0, 0);
  const clients: TestPlaybookClient[] = [];
  const as = (token: string): TestPlaybookClient => {
    const client = connectPlaybook(engine.app.port, token);
    clients.push(client);
    return client;
  };
  const context = (client: TestPlaybookClient, query: string, limit = 0) => client.call(client.raw.getPlaybookContext, { query, limit });
  const list = (client: TestPlaybookClient, extra: { includeInactive?: boolean; owner?: string; scope?: LessonScope } = {}) =>
    client
      .call(client.raw.listLessons, {
        scope: extra.scope ?? LessonScope.LESSON_SCOPE_ALL,
        domain: "",
        limit: 1000,
        includeInactive: extra.includeInactive ?? false,
        owner: extra.owner ?? "",
      })
      .then((r) => r.lessons);

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: TOKENS }, clock: () => now });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await engine?.dispose();
  });

  it("credits the lessons shown inside the 300 s window, each showing at most once, and none outside it", async () => {
    const alice = as("alice-token-0123456789");
    const { lesson } = await alice.add({
      trigger: "When converting temperatures between Celsius and Fahrenheit",
      correctPattern: "Multiply by 9/5 and add 32; check the direction of the conversion first.",
      domains: ["math"],
    });
    const query = "convert 20 degrees Celsius to Fahrenheit";
    expect((await context(alice, query)).lessons.map((l) => l.id)).toEqual([lesson?.id]);
    now += 299_000;
    const credit = await alice.call(alice.raw.creditRecentRetrievals, { windowSeconds: 0 });
    expect(credit.credited).toEqual([lesson?.id]);
    // The same showing is never credited twice.
    expect((await alice.call(alice.raw.creditRecentRetrievals, { windowSeconds: 0 })).credited).toEqual([]);

    await context(alice, query);
    now += 301_000;
    expect((await alice.call(alice.raw.creditRecentRetrievals, { windowSeconds: 0 })).credited).toEqual([]);
    // A wider window reaches it.
    expect((await alice.call(alice.raw.creditRecentRetrievals, { windowSeconds: 600 })).credited).toEqual([lesson?.id]);

    const after = await alice.call(alice.raw.getLesson, { lessonId: lesson?.id ?? "" });
    expect(after.lesson).toMatchObject({ retrievals: 2, helpfulRetrievals: 2, hitRate: 1 });
    // utility = 0.5·0.5 + 1·0.8 + ln(1 + 2)·0.1 + 0 (it helped just now)
    expect(after.lesson?.utility).toBeCloseTo(0.25 + 0.8 + Math.log(3) * 0.1, 6);
  });

  it("RecordHelpfulRetrieval credits one showing, and only after one", async () => {
    const alice = as("alice-token-0123456789");
    const { lesson } = await alice.add({
      trigger: "When a regular expression must match a literal dot",
      correctPattern: "Escape the dot or use a character class, and anchor the pattern.",
      domains: ["text"],
    });
    const id = lesson?.id ?? "";
    const early = await rpcError(alice.call(alice.raw.recordHelpfulRetrieval, { lessonId: id }));
    expect(early.code).toBe(status.FAILED_PRECONDITION);
    expect(early.details).toContain("GetPlaybookContext");
    expect((await context(alice, "regex that matches a literal dot character")).lessons.map((l) => l.id)).toContain(id);
    const credited = await alice.call(alice.raw.recordHelpfulRetrieval, { lessonId: id });
    expect(credited.lesson).toMatchObject({ retrievals: 1, helpfulRetrievals: 1 });
    expect((await rpcError(alice.call(alice.raw.recordHelpfulRetrieval, { lessonId: id }))).code).toBe(status.FAILED_PRECONDITION);
    expect((await rpcError(alice.call(alice.raw.creditRecentRetrievals, { windowSeconds: 86_401 }))).code).toBe(status.INVALID_ARGUMENT);
  });

  it("prunes exactly the often-retrieved, never-helpful, unverified lessons, never more than 25% per call", async () => {
    const pruner = as("pruner-token-0123456789");
    // Four lessons nobody asks about.
    for (const topic of TOPICS.slice(0, 4)) {
      await pruner.add({ trigger: `When ${topic}`, correctPattern: `Use the standard library for ${topic}.`, domains: ["coding"] });
    }
    // Five lessons with the same trigger (different advice): the query finds all five first (distance 0).
    const trigger = "When a database migration must run on a large production table";
    const advice = [
      "Run it in batches during a quiet hour and watch the replication lag.",
      "Add the new column as nullable first, backfill, then add the constraint.",
      "Take a backup and rehearse the migration on a copy of the data.",
      "Create indexes concurrently so writes are never blocked.",
      "Keep the old code path working until the migration has finished.",
    ];
    const ids: string[] = [];
    for (const correctPattern of advice) {
      ids.push((await pruner.add({ trigger, correctPattern, domains: ["data"] })).lesson?.id ?? "");
    }
    const [verifiedId, helpfulId, ...candidates] = ids as [string, string, string, string, string];
    await pruner.call(pruner.raw.verifyLesson, {
      lessonId: verifiedId,
      originalPassed: false,
      originalAttempts: 1,
      verifyPassed: true,
      verifyAttempts: 1,
    });
    for (let i = 0; i < 5; i++) {
      const shown = await context(pruner, trigger, 5);
      expect(new Set(shown.lessons.map((l) => l.id))).toEqual(new Set(ids));
    }
    await pruner.call(pruner.raw.recordHelpfulRetrieval, { lessonId: helpfulId });

    const prune = (dryRun: boolean) =>
      pruner.call(pruner.raw.pruneLessons, { minRetrievals: 0, maxDropFraction: 0, hasMaxDropFraction: false, dryRun });
    // 9 active lessons: ⌊0.25 × 9⌋ = 2 of the 3 candidates.
    const dry = await prune(true);
    expect(dry.dryRun).toBe(true);
    expect(dry.dropped).toHaveLength(2);
    expect((await list(pruner)).length).toBe(9);
    const first = await prune(false);
    expect(first.dropped).toHaveLength(2);
    expect(first.dropped.every((l) => candidates.includes(l.id))).toBe(true);
    expect(first.dropped.every((l) => l.state === LessonState.LESSON_STATE_ARCHIVED && l.archivedReason === "pruned")).toBe(true);
    // 7 left: ⌊1.75⌋ = 1, the last candidate.
    const second = await prune(false);
    expect(second.dropped.map((l) => l.id)).toEqual(candidates.filter((id) => !first.dropped.some((l) => l.id === id)));
    // Nothing else qualifies: verified, helpful and never-retrieved lessons stay.
    expect((await prune(false)).dropped).toEqual([]);
    const left = (await list(pruner)).map((l) => l.id);
    expect(left).toHaveLength(6);
    expect(left).toEqual(expect.arrayContaining([verifiedId, helpfulId]));
    // Pruned lessons are archived, not lost: listed on request and restorable.
    const archived = (await list(pruner, { includeInactive: true })).filter((l) => l.state === LessonState.LESSON_STATE_ARCHIVED);
    expect(archived.map((l) => l.id).sort()).toEqual([...candidates].sort());
    const restored = await pruner.call(pruner.raw.restoreLesson, { lessonId: candidates[0] as string });
    expect(restored.lesson?.state).toBe(LessonState.LESSON_STATE_ACTIVE);
    expect(
      (
        await rpcError(
          pruner.call(pruner.raw.pruneLessons, { minRetrievals: 0, maxDropFraction: 1.5, hasMaxDropFraction: true, dryRun: true }),
        )
      ).code,
    ).toBe(status.INVALID_ARGUMENT);
  });

  it("adding the 51st lesson trims in the documented order (docs/playbook.md#cap-and-trim): head pins, then verified, then the highest-utility unverified", async () => {
    const capper = as("capper-token-0123456789");
    const added: Lesson[] = [];
    for (let i = 0; i < 50; i++) {
      const topic = `${TOPICS[i % TOPICS.length]} variant ${i}`;
      // The head pin and the verified lesson get the lowest confidence of all: kept anyway.
      const confidence = i === 0 || i === 1 ? 0 : i === 2 ? 0.1 : 0.5;
      const { lesson } = await capper.add({
        trigger: `When ${topic} in project ${i}`,
        correctPattern: `Apply checklist ${i} for ${topic}.`,
        domains: ["coding"],
        confidence,
      });
      added.push(lesson as Lesson);
    }
    const [headPin, verified, weakest] = added as [Lesson, Lesson, Lesson];
    await capper.call(capper.raw.setLessonPinned, { lessonId: headPin.id, pinned: true });
    await capper.call(capper.raw.verifyLesson, {
      lessonId: verified.id,
      originalPassed: true,
      originalAttempts: 2,
      verifyPassed: true,
      verifyAttempts: 1,
    });
    expect((await list(capper)).length).toBe(50);

    const newest = await capper.add({
      trigger: "When writing a command-line tool that other scripts call",
      correctPattern: "Exit non-zero on failure and print errors to stderr.",
      domains: ["shell"],
      confidence: 0.9,
    });
    expect(newest.archived).toEqual([weakest.id]);
    const active = await list(capper);
    expect(active).toHaveLength(50);
    expect(active.map((l) => l.id)).toEqual(expect.arrayContaining([headPin.id, verified.id, newest.lesson?.id]));
    // Ordered by utility; every lesson reports it.
    const utilities = active.map((l) => l.utility);
    expect([...utilities].sort((a, b) => b - a)).toEqual(utilities);
    const trimmed = await capper.call(capper.raw.getLesson, { lessonId: weakest.id });
    expect(trimmed.lesson).toMatchObject({ state: LessonState.LESSON_STATE_ARCHIVED, archivedReason: "cap" });
  });

  it("ListLessons scopes: today, this week, everything", async () => {
    const bob = as("bob-token-0123456789");
    const old = await bob.add({
      trigger: "When naming git branches",
      correctPattern: "Prefix them with the issue number.",
      domains: ["coding"],
    });
    now += 3 * DAY_MS;
    const recent = await bob.add({
      trigger: "When writing commit messages",
      correctPattern: "Say what changed and why.",
      domains: ["coding"],
    });
    expect((await list(bob, { scope: LessonScope.LESSON_SCOPE_TODAY })).map((l) => l.id)).toEqual([recent.lesson?.id]);
    expect((await list(bob, { scope: LessonScope.LESSON_SCOPE_WEEK })).map((l) => l.id).sort()).toEqual(
      [old.lesson?.id, recent.lesson?.id].sort(),
    );
    // Three days without helping cost the older lesson 0.03.
    const [oldView] = (await list(bob)).filter((l) => l.id === old.lesson?.id);
    expect(oldView?.utility).toBeCloseTo(0.25 - 0.03, 6);
  });

  it("isolates agents: another agent's lesson is NOT_FOUND and never retrieved; public lessons are shared read-only; admins see all", async () => {
    const alice = as("alice-token-0123456789");
    const bob = as("bob-token-0123456789");
    const root = as("root-token-0123456789");
    const secret = await alice.add({
      trigger: "When deploying the payments service on Fridays",
      correctPattern: "Freeze deploys after noon and keep a rollback ready.",
      domains: ["planning"],
    });
    const id = secret.lesson?.id ?? "";
    const query = "deploying the payments service on a Friday afternoon";
    expect((await context(alice, query)).lessons.map((l) => l.id)).toContain(id);
    expect((await context(bob, query)).context).toBe("");
    for (const attempt of [
      bob.call(bob.raw.getLesson, { lessonId: id }),
      bob.call(bob.raw.deleteLesson, { lessonId: id }),
      bob.call(bob.raw.setLessonPinned, { lessonId: id, pinned: true }),
      bob.call(bob.raw.recordHelpfulRetrieval, { lessonId: id }),
    ]) {
      expect((await rpcError(attempt)).code).toBe(status.NOT_FOUND);
    }
    expect((await list(bob)).map((l) => l.id)).not.toContain(id);
    expect((await rpcError(list(bob, { owner: "alice" }))).code).toBe(status.PERMISSION_DENIED);
    expect((await list(root, { owner: "alice" })).map((l) => l.id)).toContain(id);
    expect((await root.call(root.raw.getLesson, { lessonId: id })).lesson?.owner).toBe("alice");

    const shared = await alice.add({
      trigger: "When an API paginates its results with cursors",
      correctPattern: "Follow the next cursor until it is empty; never assume one page.",
      domains: ["api"],
      visibility: 2,
    });
    const sharedId = shared.lesson?.id ?? "";
    expect((await bob.call(bob.raw.getLesson, { lessonId: sharedId })).lesson?.owner).toBe("alice");
    expect((await context(bob, "fetch every page of results from a cursor-paginated API")).lessons.map((l) => l.id)).toContain(sharedId);
    const denied = await rpcError(bob.call(bob.raw.deleteLesson, { lessonId: sharedId }));
    expect(denied.code).toBe(status.PERMISSION_DENIED);
    // Soft delete by the owner: gone from retrieval, restorable.
    await alice.call(alice.raw.deleteLesson, { lessonId: sharedId });
    expect((await context(bob, "fetch every page of results from a cursor-paginated API")).lessons.map((l) => l.id)).not.toContain(
      sharedId,
    );
    const back = await alice.call(alice.raw.restoreLesson, { lessonId: sharedId });
    expect(back.lesson?.state).toBe(LessonState.LESSON_STATE_ACTIVE);
  });
});
