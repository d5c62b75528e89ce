import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import type { LessonRecord } from "./lesson.js";
import { LESSONS_MIRROR_FILE, LessonsMirrorWriter, readLessonsMirror } from "./lessons-mirror.js";

const LESSON: LessonRecord = {
  id: "lsn_0123456789abcdef",
  owner: "agent-7",
  trigger: "When parsing dates with time zones",
  antiPattern: "",
  correctPattern: "Use an aware datetime parser.",
  domains: ["data"],
  confidence: 0.6,
  source: "self-play",
  sourceChallengeHash: "c1",
  challengeTextHash: "ab",
  state: "archived",
  archivedReason: "cap",
  visibility: "public",
  verified: true,
  pinned: false,
  retrievals: 7,
  helpfulRetrievals: 2,
  timesAdded: 3,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_100_000,
  lastRetrievedAt: 1_700_000_050_000,
  lastHelpfulAt: undefined,
};

describe("lessons.json", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  it("round-trips every field, and is absent until written", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "lessons-mirror-"));
    dirs.push(dir);
    expect(await readLessonsMirror(dir)).toBeUndefined();
    const writer = new LessonsMirrorWriter(dir, () => [LESSON], pino({ level: "silent" }));
    await writer.flush();
    expect(await readLessonsMirror(dir)).toEqual({ lessons: [LESSON], skipped: [] });
  });

  it("skips a damaged entry and keeps the others", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "lessons-mirror-"));
    dirs.push(dir);
    const writer = new LessonsMirrorWriter(dir, () => [LESSON], pino({ level: "silent" }));
    await writer.flush();
    const document = JSON.parse(await readFile(path.join(dir, LESSONS_MIRROR_FILE), "utf8")) as { lessons: unknown[] };
    document.lessons.push({ id: "lsn_broken", owner: "agent-7" });
    await writeFile(path.join(dir, LESSONS_MIRROR_FILE), JSON.stringify(document));
    const reading = await readLessonsMirror(dir);
    expect(reading?.lessons.map((l) => l.id)).toEqual([LESSON.id]);
    expect(reading?.skipped).toHaveLength(1);
    expect(reading?.skipped[0]).toContain("entry 1");
  });
});
