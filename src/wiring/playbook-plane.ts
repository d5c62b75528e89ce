import path from "node:path";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import { REGISTRY_FILE } from "../control/index.js";
import type { Embedder } from "../embedding/index.js";
import { serviceCaller } from "../identity/index.js";
import { PlaybookMetrics, type ServiceMetrics } from "../observability/index.js";
import { type Clock, createPlaybook, type PlaybookEvents, type PlaybookService } from "../playbook/index.js";
import { qdrantCollectionName, SqliteVecIndex } from "../search/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";
import { withQdrant } from "./routing-plane.js";

/** A started playbook: its use cases, and how to close its connection and indexes. */
export interface PlaybookPlane {
  readonly service: PlaybookService;
  close(): Promise<void>;
}

/**
 * The playbook beside the registry: its own durable connection to registry.db (lessons are
 * acknowledged only once on disk), the routing embedder, a vector index of its own (sqlite-vec
 * table `lesson_vectors`; with Qdrant, a `skill_engine_lessons_<model>_<dimensions>` collection in
 * front of it, filled from the embedded table as the skills' collection is).
 */
export async function startPlaybook(
  config: SkillEngineConfig,
  logger: Logger,
  embedder: Embedder,
  canonicalDirectory: string,
  hooks: {
    readonly clock?: Clock;
    readonly events?: PlaybookEvents;
  } = {},
): Promise<PlaybookPlane> {
  const db = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: true, cacheKib: config.sqliteCacheKib });
  const vectors = withQdrant(
    config,
    new SqliteVecIndex(db, { table: "lesson_vectors", logger }),
    // Named per embedder, like the skills' collection (docs/routing.md#qdrant).
    qdrantCollectionName(embedder.modelId, embedder.dimensions, "skill_engine_lessons"),
    { logger },
  );
  const service = createPlaybook({
    db,
    embedder,
    vectors,
    mirrorDirectory: canonicalDirectory,
    policy: config.playbook,
    logger,
    ...(hooks.clock ? { clock: hooks.clock } : {}),
    ...(hooks.events ? { events: hooks.events } : {}),
  });
  const report = await service.init();
  if (report.restored > 0 || report.reindexed) logger.info(report, "playbook ready");
  return {
    service,
    async close() {
      await service.close();
      await vectors.close();
      if (db.open) db.close();
    },
  };
}

/** The playbook as the service runs it: started, with its lesson counts on /metrics. */
export async function startPlaybookPlane(
  config: SkillEngineConfig,
  logger: Logger,
  parts: { readonly embedder: Embedder; readonly canonicalDirectory: string; readonly metrics: ServiceMetrics; readonly clock?: Clock },
): Promise<PlaybookPlane> {
  const playbookMetrics = new PlaybookMetrics(parts.metrics.registry);
  const playbook = await startPlaybook(config, logger.child({ component: "playbook" }), parts.embedder, parts.canonicalDirectory, {
    events: playbookMetrics,
    ...(parts.clock ? { clock: parts.clock } : {}),
  });
  playbookMetrics.attach(() => playbook.service.countsByOwnerAndState());
  return playbook;
}

/** Prunes lessons every SKILL_ENGINE_LESSON_PRUNE_SWEEP_MINUTES (docs/playbook.md); none when 0. */
export function startLessonPruneSweep(config: SkillEngineConfig, logger: Logger, playbook: PlaybookService): NodeJS.Timeout | undefined {
  const sweep =
    config.playbook.pruneSweepMinutes > 0
      ? setInterval(() => {
          playbook
            .prune({ minRetrievals: 0, maxDropFraction: undefined, dryRun: false }, serviceCaller("lesson-prune-sweep"))
            .catch((error: unknown) => logger.error({ err: error }, "lesson prune sweep failed"));
        }, config.playbook.pruneSweepMinutes * 60_000)
      : undefined;
  sweep?.unref();
  return sweep;
}
