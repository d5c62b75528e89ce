import path from "node:path";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import {
  CanonicalStore,
  Composition,
  ConditionHost,
  type ControlPlane,
  CPythonSyntaxChecker,
  createControlPlane,
  type DuplicateScreen,
  type EnvironmentAdministration,
  type FolderSkillRuns,
  type LegacyMigrationReport,
  migrateLegacySkills,
  MirrorWriter,
  NormalizingGuardedIntake,
  reconcile,
  type ReconcileReport,
  REGISTRY_FILE,
  type RoutingGate,
  type SkillEnvironments,
  type SkillIndexer,
  SkillRegistry,
  type SkillSecrets,
} from "../control/index.js";
import { errorMessage } from "../errors/index.js";
import type { ExecutionPlane } from "../execution/index.js";
import { serviceCaller } from "../identity/index.js";
import { openRegistryDatabase } from "../sqlite/index.js";

/** The control plane's stores, opened, recovered and reconciled, as the use cases and the other planes share them. */
export interface ControlStores {
  readonly registry: SkillRegistry;
  readonly store: CanonicalStore;
  readonly mirror: MirrorWriter;
  /** Composition's own connection to registry.db; skill folders keep their tables beside its. */
  readonly compositionDb: Database.Database;
  readonly composition: Composition;
  readonly migrationReport: LegacyMigrationReport;
  readonly reconcileReport: ReconcileReport;
}

/** The intake every code change goes through, its parser checked first: a Python that cannot parse `pass` stops the start. */
export async function startIntake(config: SkillEngineConfig, logger: Logger): Promise<NormalizingGuardedIntake> {
  const checker = new CPythonSyntaxChecker({ pythonPath: config.pythonPath, logger: logger.child({ component: "python-parser" }) });
  await assertParserWorks(checker, config.pythonPath);
  const intake = new NormalizingGuardedIntake(checker, config.contentGuard);
  if (config.contentGuard === "warn") logger.warn("content guard in warn mode: dangerous code is reported, not rejected");
  return intake;
}

/**
 * The registry (its migrations run as it opens), the canonical store, the legacy migration,
 * reconciliation of the two, the mirror brought up to date, and composition's declarations
 * (docs/architecture.md#start-up-order).
 */
export async function openControlStores(
  config: SkillEngineConfig,
  logger: Logger,
  intake: NormalizingGuardedIntake,
): Promise<ControlStores> {
  const registry = SkillRegistry.open(path.join(config.home, REGISTRY_FILE), config.healthPolicy, {
    telemetrySyncMs: config.telemetrySyncMs,
    sqliteCacheKib: config.sqliteCacheKib,
  });
  const store = new CanonicalStore(config.home);
  const { mirrorCreated } = await store.init();
  // No mirror directory: every skill's file is written at this start (docs/operations.md#the-registry-mirror).
  if (mirrorCreated) registry.markWholeMirror();
  const migrationReport = await migrateLegacySkills({
    sandboxDir: config.sandboxDir,
    registry,
    store,
    intake,
    logger: logger.child({ component: "migration" }),
  });
  const reconcileReport = await reconcile(registry, store, logger);
  const mirror = new MirrorWriter(registry, store, logger);
  await mirror.flush();
  // Its own connection to registry.db (WAL), durable like the registry: declarations are acknowledged state.
  const compositionDb = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: true, cacheKib: config.sqliteCacheKib });
  // Steps' conditions run in a child process of their own (docs/composition.md#where-conditions-run), started on first use.
  const conditions = new ConditionHost({ logger: logger.child({ component: "conditions" }) });
  const composition = new Composition(registry, store, compositionDb, config.composition, conditions);
  return { registry, store, mirror, compositionDb, composition, migrationReport, reconcileReport };
}

/**
 * Composed skills recognised from their canonical definitions; a mandatory skill that is missing or
 * not ready stops the start (docs/composition.md#mandatory-skills). With skill directories that check
 * waits for their first scan ({@link checkMandatoryAfterScan}), which may register, or retire, a mandatory skill.
 */
export async function checkComposedSkills(config: SkillEngineConfig, logger: Logger, composition: Composition): Promise<void> {
  const recovered = await composition.backfill();
  if (recovered > 0) logger.warn({ recovered }, "composed skills recognised from their canonical definitions");
  if (config.skillSources.dirs.length === 0) composition.assertMandatory(config.mandatorySkills);
}

/** The mandatory skills' check once the skill directories were scanned (docs/composition.md#mandatory-skills); none without directories. */
export async function checkMandatoryAfterScan(
  config: SkillEngineConfig,
  composition: Composition,
  firstScan: Promise<unknown>,
): Promise<void> {
  if (config.skillSources.dirs.length === 0 || config.mandatorySkills.length === 0) return;
  await firstScan;
  composition.assertMandatory(config.mandatorySkills);
}

/** Closes the intake and the stores when the start stops after opening them, in the order shutdown closes them. */
export async function closeControlStores(stores: ControlStores, intake: NormalizingGuardedIntake): Promise<void> {
  await stores.mirror.close();
  await intake.close();
  await stores.composition.close();
  stores.compositionDb.close();
  stores.registry.close();
}

/** The use cases over the stores, the execution plane's port and what the other planes lend them. */
export function createUseCases(
  config: SkillEngineConfig,
  logger: Logger,
  stores: ControlStores,
  ports: {
    readonly intake: NormalizingGuardedIntake;
    readonly runner: ExecutionPlane;
    readonly indexer: SkillIndexer;
    readonly duplicates: DuplicateScreen;
    /** RegisterSkill's routing gate (docs/routing.md#the-routing-gate). */
    readonly routingGate?: RoutingGate;
    readonly folders: FolderSkillRuns;
    readonly environments: SkillEnvironments;
    readonly environmentAdmin?: EnvironmentAdministration;
    /** The agents' secrets (docs/security.md#declaring-and-delivering); omitted: none can be read. */
    readonly secrets?: SkillSecrets;
  },
): ControlPlane {
  return createControlPlane({
    duplicates: ports.duplicates,
    ...(ports.routingGate ? { routingGate: ports.routingGate } : {}),
    composition: stores.composition,
    registry: stores.registry,
    store: stores.store,
    runner: ports.runner,
    mirror: stores.mirror,
    intake: ports.intake,
    policy: config.healthPolicy,
    indexer: ports.indexer,
    logger: logger.child({ component: "control" }),
    folders: ports.folders,
    environments: ports.environments,
    ...(ports.environmentAdmin ? { environmentAdmin: ports.environmentAdmin } : {}),
    ...(ports.secrets ? { secrets: ports.secrets } : {}),
    inputFiles: config.inputFiles,
    // What skills may declare in network_allow, checked at registration and before every run (docs/security.md#declaring-hosts).
    egressPolicy: config.egress.allowedHosts,
  });
}

/** Retires what the health rules condemn every SKILL_ENGINE_RETIRE_SWEEP_MINUTES (docs/operations.md#retirement-sweep); none when 0. */
export function startRetirementSweep(config: SkillEngineConfig, logger: Logger, control: ControlPlane): NodeJS.Timeout | undefined {
  const sweep =
    config.retireSweepMinutes > 0
      ? setInterval(() => {
          control.retirementSweep
            .sweep({ dryRun: false }, { caller: serviceCaller("retire-sweep") })
            .catch((error: unknown) => logger.error({ err: error }, "retirement sweep failed"));
        }, config.retireSweepMinutes * 60_000)
      : undefined;
  sweep?.unref();
  return sweep;
}

/** Fails start-up with what to do when the intake parser cannot run. */
async function assertParserWorks(checker: CPythonSyntaxChecker, pythonPath: string): Promise<void> {
  try {
    const verdict = await checker.check("pass\n");
    if (verdict.ok) return;
    throw new Error(verdict.message);
  } catch (error) {
    await checker.close().catch(() => undefined);
    throw new Error(
      `the intake parser (${pythonPath}) does not work: ${errorMessage(error)}; ` +
        "install Debian's python3 (apt-get install python3) or set SKILL_ENGINE_PYTHON",
      { cause: error },
    );
  }
}
