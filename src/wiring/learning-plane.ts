import path from "node:path";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import { type ControlPlane, REGISTRY_FILE, type SkillRegistry } from "../control/index.js";
import type { Embedder } from "../embedding/index.js";
import {
  type InstructionsRegistrar,
  LearningMirror,
  LearningService,
  LearningStore,
  NearDuplicateDetector,
  NearDuplicateScreen,
} from "../learning/index.js";
import { LearningMetrics, type ServiceMetrics } from "../observability/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";

/** Near-duplicates at the door (docs/learning.md#near-duplicates), counted with learning's metrics. */
export function createDuplicateScreen(
  config: SkillEngineConfig,
  embedder: Embedder,
  metrics: ServiceMetrics,
): { screen: NearDuplicateScreen; events: LearningMetrics } {
  const events = new LearningMetrics(metrics.registry);
  const screen = new NearDuplicateScreen(new NearDuplicateDetector(embedder, config.learning.duplicates), (verdict) =>
    events.nearDuplicate(verdict),
  );
  return { screen, events };
}

/**
 * Learning (docs/learning.md) over its own durable connection to registry.db (WAL), as the playbook's,
 * restored from its mirror when the database lost what the mirror holds.
 */
export async function startLearning(
  config: SkillEngineConfig,
  logger: Logger,
  parts: {
    readonly canonicalDirectory: string;
    readonly registry: SkillRegistry;
    readonly control: ControlPlane;
    readonly events: LearningMetrics;
    /** Where promotion registers routines of tools that are not skills (docs/learning.md#promotion). */
    readonly instructions?: InstructionsRegistrar;
  },
): Promise<{ service: LearningService; close(): Promise<void> }> {
  const { registry, events } = parts;
  const db = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: true, cacheKib: config.sqliteCacheKib });
  const store = new LearningStore(db);
  const mirror = new LearningMirror(parts.canonicalDirectory, store, registry, logger.child({ component: "learning" }));
  const restored = await mirror.init();
  if (restored.candidates + restored.outcomes > 0) logger.info(restored, "learning restored from its mirror");
  const service = new LearningService({
    store,
    skills: parts.control,
    registry,
    policy: config.learning,
    logger: logger.child({ component: "learning" }),
    mirror,
    events,
    ...(parts.instructions ? { instructions: parts.instructions } : {}),
  });
  events.attach(() => store.countsByStatus());
  return {
    service,
    async close() {
      await mirror.close();
      if (db.open) db.close();
    },
  };
}
