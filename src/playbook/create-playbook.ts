import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { Embedder } from "../embedding/index.js";
import { KeywordIndex, type VectorIndex } from "../search/index.js";
import type { Clock, PlaybookPolicy } from "./lesson.js";
import { LessonStore } from "./lesson-store.js";
import { LessonsMirrorWriter } from "./lessons-mirror.js";
import { PlaybookService } from "./playbook-service.js";
import type { PlaybookEvents } from "./playbook-types.js";

export interface CreatePlaybookOptions {
  /** A handle on registry.db; the playbook's tables live beside the skills. */
  readonly db: Database.Database;
  readonly embedder: Embedder;
  /** The lessons' vector index: a sqlite-vec table (`lesson_vectors`) or a Qdrant collection of their own. */
  readonly vectors: VectorIndex;
  /** The canonical directory (`memory/acquired_skills/`), where `lessons.json` is kept. */
  readonly mirrorDirectory: string;
  readonly policy: PlaybookPolicy;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly events?: PlaybookEvents;
}

/** The playbook's SQLite tables (`lessons`, `lesson_retrievals`, `playbook_meta`, `lesson_keywords*`), mirror and service; call `init()` next. */
export function createPlaybook(options: CreatePlaybookOptions): PlaybookService {
  const store = new LessonStore(options.db);
  const mirror = new LessonsMirrorWriter(
    options.mirrorDirectory,
    () => store.list(undefined, ["active", "archived", "deleted"]),
    options.logger,
  );
  return new PlaybookService({
    store,
    embedder: options.embedder,
    vectors: options.vectors,
    // The trigger and patterns are the text; lesson ids carry no words worth matching.
    keywords: new KeywordIndex(options.db, {
      table: "lesson_keywords",
      weights: { name: 0, description: 1, evidence: 1 },
      logger: options.logger,
    }),
    mirror,
    mirrorDirectory: options.mirrorDirectory,
    policy: options.policy,
    logger: options.logger,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.events ? { events: options.events } : {}),
  });
}
