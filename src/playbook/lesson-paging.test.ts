import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { WordEmbedder } from "../../test/support/word-embedder.js";
import { LOCAL_CALLER } from "../identity/index.js";
import { SqliteVecIndex } from "../search/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";
import { createPlaybook } from "./create-playbook.js";
import { DEFAULT_PLAYBOOK_POLICY } from "./lesson.js";
import type { ListLessonsRequest } from "./lesson-queries.js";
import type { PlaybookService } from "./playbook-service.js";
import type { LessonView } from "./playbook-types.js";

const DAY = 86_400_000;
const TOPICS = [
  "parsing dates from user input",
  "reading a CSV file",
  "sorting a dictionary by its values",
  "retrying a flaky HTTP request",
  "writing a file atomically",
  "comparing floating point numbers",
  "escaping shell arguments",
  "merging two sorted lists",
  "decoding JSON with duplicate keys",
  "rounding money amounts",
  "walking a directory tree",
  "splitting text into sentences",
];

/**
 * ListLessons a page at a time over a real registry.db (docs/api.md#pagination): utility's stale
 * penalty grows with the clock, and the clock moves between the pages here, as it does for a client.
 */
describe("ListLessons pages while the clock moves", () => {
  let dir: string;
  let now: number;
  let playbook: PlaybookService;
  let close: () => void;

  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "lesson-paging-"));
    const db = openRegistryDatabase(path.join(dir, "registry.db"), { durable: false });
    const logger = pino({ level: "silent" });
    now = Date.UTC(2026, 0, 1);
    playbook = createPlaybook({
      db,
      embedder: new WordEmbedder(),
      vectors: new SqliteVecIndex(db, { table: "lesson_vectors", logger }),
      mirrorDirectory: dir,
      policy: DEFAULT_PLAYBOOK_POLICY,
      logger,
      clock: () => now,
    });
    await playbook.init();
    close = () => db.close();
  });

  afterEach(async () => {
    await playbook.close();
    close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Lessons added three days apart, the older ones more confident: as days pass, the newer ones' penalty catches up and they fall below. */
  async function addLessons(): Promise<string[]> {
    const ids: string[] = [];
    for (const [i, topic] of TOPICS.entries()) {
      const draft = {
        trigger: `When ${topic}`,
        antiPattern: "",
        correctPattern: `Do ${topic} with the standard library, step ${i}.`,
        domains: ["coding"],
        confidence: 0.9 - i * 0.03,
        source: "self-play",
        sourceChallengeHash: "",
        challengeText: "",
        visibility: "private" as const,
      };
      ids.push((await playbook.add(draft, LOCAL_CALLER)).lesson.id);
      now += 3 * DAY;
    }
    return ids;
  }

  const request = (pageToken: string): ListLessonsRequest => ({
    scope: "all",
    domain: "",
    limit: 0,
    includeInactive: false,
    owner: "",
    pageSize: 5,
    pageToken,
  });

  it("lists every lesson exactly once, in one utility order, when days pass between the pages", async () => {
    const added = await addLessons();
    const walk: LessonView[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = playbook.listPage(request(token), LOCAL_CALLER);
      walk.push(...page.items);
      token = page.nextPageToken;
      pages++;
      now += 4 * DAY;
    } while (token !== "" && pages < 10);

    expect(pages).toBe(3);
    expect(walk.map((l) => l.id).sort()).toEqual([...added].sort());
    // The walk's order is one order: the utilities, as of its first page, never rise from one lesson to the next.
    const utilities = walk.map((l) => l.utility);
    expect(utilities).toEqual([...utilities].sort((a, b) => b - a));
    // The clock did move the order: read again now, in one page, the lessons stand in another order.
    const again = playbook.listPage({ ...request(""), pageSize: 50 }, LOCAL_CALLER).items.map((l) => l.id);
    expect(again).not.toEqual(walk.map((l) => l.id));
  });

  it("refuses a ListLessons token of the format that carried no instant", async () => {
    await addLessons();
    const { nextPageToken } = playbook.listPage(request(""), LOCAL_CALLER);
    const payload = JSON.parse(Buffer.from(nextPageToken, "base64url").toString("utf8")) as Record<string, unknown>;
    const older = Buffer.from(JSON.stringify({ v: 1, l: payload.l, f: payload.f, k: payload.k })).toString("base64url");
    expect(() => playbook.listPage(request(older), LOCAL_CALLER)).toThrow(/page_token: .*issued by another version of the service/);
  });
});
