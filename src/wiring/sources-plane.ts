import { randomBytes } from "node:crypto";
import path from "node:path";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import type { ControlPlane, SkillRegistry } from "../control/index.js";
import { type ServiceMetrics, SourceMetrics } from "../observability/index.js";
import type { InstructionsRegistrar } from "../learning/index.js";
import { FolderSkillReads, FolderStore, folderHash, SkillBundles, SkillSources, SourceStore, SourceWatcher } from "../sources/index.js";

/** Where folder skills are kept (docs/skill-sources.md): their tables beside composition's, their canonical copies in the home. */
export interface FolderStores {
  readonly sources: SourceStore;
  readonly folders: FolderStore;
  /** What routing and the use cases read of folder skills. */
  readonly reads: FolderSkillReads;
}

export function openFolderStores(config: SkillEngineConfig, compositionDb: Database.Database): FolderStores {
  const sources = new SourceStore(compositionDb);
  const folders = new FolderStore(config.home);
  return { sources, folders, reads: new FolderSkillReads({ sources, folders }) };
}

/**
 * The skill directories and bundles: folder skill versions recognised from their canonical records,
 * then the catalog's counts on /metrics. Scanning starts later, beside serving ({@link watchSkillFolders}).
 */
export async function startSkillSources(
  config: SkillEngineConfig,
  logger: Logger,
  parts: {
    readonly stores: FolderStores;
    readonly registry: SkillRegistry;
    readonly control: ControlPlane;
    readonly metrics: ServiceMetrics;
  },
): Promise<{ skillSources: SkillSources; bundles: SkillBundles }> {
  const { stores, registry, control } = parts;
  const skillSources = new SkillSources({
    roots: config.skillSources.dirs,
    registry,
    skills: control.folderSkills,
    sources: stores.sources,
    folders: stores.folders,
    logger: logger.child({ component: "skill-sources" }),
    maxFileBytes: config.skillSources.maxFileBytes,
  });
  const recoveredSources = await skillSources.backfill();
  if (recoveredSources > 0) logger.warn({ recovered: recoveredSources }, "folder skill versions recognised from their canonical records");
  const bundles = new SkillBundles({
    sources: skillSources,
    sourceStore: stores.sources,
    folders: stores.folders,
    registry,
    queries: control.queries,
    stagingDir: path.join(config.home, "memory", ".bundle-staging"),
  });
  new SourceMetrics(parts.metrics.registry).attach(() => skillSources.countsBySourceAndStatus());
  return { skillSources, bundles };
}

/**
 * The first scan runs beside serving (executable folders wait for their test runs); hot reload after it.
 * `firstScan` settles when that scan is done (a failed one is logged), for the mandatory skills' check.
 */
export function watchSkillFolders(
  config: SkillEngineConfig,
  logger: Logger,
  skillSources: SkillSources,
): { watcher: SourceWatcher; firstScan: Promise<void> } {
  const sourceWatcher = new SourceWatcher({
    roots: config.skillSources.watch ? config.skillSources.dirs : [],
    rescan: async () => ({ folders: (await skillSources.rescan()).entries.map((entry) => entry.folder) }),
    logger: logger.child({ component: "skill-sources" }),
    debounceMs: config.skillSources.debounceMs,
    intervalMs: config.skillSources.rescanMs,
  });
  let firstScan = Promise.resolve();
  if (config.skillSources.dirs.length > 0) {
    firstScan = skillSources.rescan().then(
      () => undefined,
      (error: unknown) => logger.error({ err: error }, "first scan of the skill directories failed"),
    );
    sourceWatcher.start();
  }
  return { watcher: sourceWatcher, firstScan };
}

/**
 * Promotion's way to an instructions-only skill (docs/learning.md#promotion): its SKILL.md registered
 * like an imported bundle's (no folder to lose), owned by the promoting agent and private; a new
 * version of the same skill keeps its id.
 */
export function instructionsRegistrar(skillSources: SkillSources, stores: FolderStores): InstructionsRegistrar {
  return {
    async register(skill, context) {
      const files = [{ path: "SKILL.md", content: Buffer.from(skill.skillMd, "utf8") }];
      const skillId = stores.sources.latest(skill.name)?.skillId ?? `${skill.name}__learned_${randomBytes(4).toString("hex")}`;
      const registered = await skillSources.registerFiles(
        {
          source: { name: skill.name, skillId, root: "", folder: `learned:${skill.name}`, hash: folderHash(files) },
          files,
          access: { owner: context.caller.agentId, visibility: "private" },
        },
        context,
      );
      return registered.skill;
    },
    isInstructions(name) {
      return stores.sources.latest(name)?.kind === "instructions";
    },
  };
}
