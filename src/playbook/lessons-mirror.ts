import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "pino";
import { z } from "zod";
import { CoalescedWrites, writeFileAtomic } from "../control/index.js";
import { errorMessage } from "../errors/index.js";
import type { LessonRecord } from "./lesson.js";

/** The mirror's file name, beside the registry's mirror (`.registry/`) in the canonical directory. */
export const LESSONS_MIRROR_FILE = "lessons.json";
export const LESSONS_MIRROR_FORMAT = 1;

const LessonEntrySchema = z.object({
  id: z.string().min(1).max(128),
  owner: z.string().min(1).max(64),
  trigger: z.string(),
  antiPattern: z.string().default(""),
  correctPattern: z.string(),
  domains: z.array(z.string()).default([]),
  confidence: z.number().min(0).max(1).catch(0.5),
  source: z.string().default(""),
  sourceChallengeHash: z.string().default(""),
  challengeTextHash: z.string().default(""),
  state: z.enum(["active", "archived", "deleted"]).catch("active"),
  archivedReason: z.enum(["", "cap", "pruned"]).catch(""),
  visibility: z.enum(["private", "public"]).catch("private"),
  verified: z.boolean().default(false),
  pinned: z.boolean().default(false),
  retrievals: z.number().int().min(0).catch(0),
  helpfulRetrievals: z.number().int().min(0).catch(0),
  timesAdded: z.number().int().min(1).catch(1),
  createdAt: z.number(),
  updatedAt: z.number(),
  lastRetrievedAt: z.number().optional(),
  lastHelpfulAt: z.number().optional(),
});

const MirrorSchema = z.object({ format: z.literal(LESSONS_MIRROR_FORMAT), lessons: z.array(z.unknown()) });

/** What a mirror file held: the lessons it could read, and what it had to skip. */
export interface LessonsMirrorReading {
  readonly lessons: LessonRecord[];
  readonly skipped: string[];
}

/**
 * Reads `lessons.json`: undefined when there is none; a file that is not a lessons mirror at all
 * is an error; a single unreadable entry is skipped (and reported), never the whole file.
 */
export async function readLessonsMirror(directory: string): Promise<LessonsMirrorReading | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(directory, LESSONS_MIRROR_FILE), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  const document = MirrorSchema.parse(JSON.parse(text));
  const lessons: LessonRecord[] = [];
  const skipped: string[] = [];
  document.lessons.forEach((entry, index) => {
    const parsed = LessonEntrySchema.safeParse(entry);
    if (parsed.success)
      lessons.push({ ...parsed.data, lastRetrievedAt: parsed.data.lastRetrievedAt, lastHelpfulAt: parsed.data.lastHelpfulAt });
    else skipped.push(`entry ${index}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  });
  return { lessons, skipped };
}

/**
 * Keeps `lessons.json` in step with the lessons table, so the canonical directory alone can
 * rebuild the playbook. Every change is coalesced (one rewrite per `coalesceMs`, and one at close):
 * registry.db is the durable source of truth, acknowledged before the answer; the mirror is for
 * losing registry.db, and rewriting the whole file on every add would make a large playbook's
 * writes quadratic. Each write replaces the file atomically (temp file, fsync, rename).
 */
export class LessonsMirrorWriter {
  private readonly writes: CoalescedWrites;

  constructor(
    private readonly directory: string,
    private readonly snapshot: () => LessonRecord[],
    private readonly logger: Logger,
    coalesceMs = 1_000,
  ) {
    this.writes = new CoalescedWrites(
      () => this.write(),
      (error: unknown) => this.logger.error({ err: error }, `could not rewrite ${LESSONS_MIRROR_FILE}: ${errorMessage(error)}`),
      coalesceMs,
    );
  }

  /** Rewrites the mirror now (after any write already in progress). */
  async flush(): Promise<void> {
    await this.writes.flush();
  }

  /** Rewrites the mirror soon; many calls within the window cost one write. */
  schedule(): void {
    this.writes.schedule();
  }

  async close(): Promise<void> {
    await this.writes.close();
  }

  private async write(): Promise<void> {
    const lessons = this.snapshot().sort((a, b) => a.id.localeCompare(b.id));
    const document = { format: LESSONS_MIRROR_FORMAT, lessons };
    await writeFileAtomic(path.join(this.directory, LESSONS_MIRROR_FILE), `${JSON.stringify(document, null, 2)}\n`);
  }
}
