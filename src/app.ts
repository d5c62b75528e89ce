import { mkdir } from "node:fs/promises";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "./config/index.js";
import type { LegacyMigrationReport, ReconcileReport } from "./control/index.js";
import { loadServerCredentials, startGrpcServer } from "./grpc/index.js";
import { Authenticator } from "./identity/index.js";
import { ServiceMetrics } from "./observability/index.js";
import type { Clock } from "./playbook/index.js";
import {
  attachServiceGauges,
  checkComposedSkills,
  checkMandatoryAfterScan,
  closeControlStores,
  connectBus,
  createDuplicateScreen,
  createExecutionPlane,
  createSecretsService,
  createUseCases,
  instanceTagOf,
  instructionsRegistrar,
  keepEngineInService,
  openControlStores,
  openFolderStores,
  openSecretStore,
  privateSocketFor,
  ServingState,
  ShutdownGrace,
  startEnvironments,
  startEnvironmentSweep,
  startIntake,
  startLearning,
  startLessonPruneSweep,
  startMcpDoor,
  startMetricsPort,
  startPlaybookPlane,
  startRetirementSweep,
  startRouting,
  startSkillSources,
  watchSkillFolders,
} from "./wiring/index.js";

export { instanceTagOf, startPlaybook, startRouting } from "./wiring/index.js";

/** A running service, as the entry point and the tests see it. */
export interface SkillEngineApp {
  readonly port: number;
  readonly reconcileReport: ReconcileReport;
  readonly migrationReport: LegacyMigrationReport;
  /** The metrics port actually bound, when metrics are on. */
  readonly metricsPort: number | undefined;
  /** The MCP door's port actually bound (Streamable HTTP at /mcp), when SKILL_ENGINE_MCP_PORT is set. */
  readonly mcpPort: number | undefined;
  /** Re-reads the tokens file (SIGHUP); a broken file keeps the previous tokens and throws. */
  reloadTokens(): Promise<{ agents: number }>;
  /**
   * Graceful shutdown: health says NOT_SERVING and no new call is accepted; calls in flight get
   * `config.shutdownGraceMs` to finish; then the runs still going are stopped (their containers
   * removed) and the calls still open are cut; storage is flushed and closed. Idempotent.
   */
  close(): Promise<void>;
  /** Ends the grace of a close() in progress now (a second SIGTERM/SIGINT); no effect otherwise. */
  endGrace(): void;
}

/** What tests may replace when they start the service in-process. */
export interface SkillEngineOverrides {
  /** The playbook's clock (credit windows, scopes, staleness), so tests move time instead of sleeping. @default Date.now */
  readonly clock?: Clock;
}

/**
 * The composition root: config → stores → planes → server. Nothing else wires components or
 * decides start-up order (docs/architecture.md#start-up-order); each plane's wiring is in src/wiring/.
 */
export async function startSkillEngine(
  config: SkillEngineConfig,
  logger: Logger,
  overrides: SkillEngineOverrides = {},
): Promise<SkillEngineApp> {
  // Config: unreadable TLS files stop the start before anything is opened.
  const credentials = config.tls ? await loadServerCredentials(config.tls) : undefined;
  await mkdir(config.home, { recursive: true, mode: 0o700 });
  await mkdir(config.sandboxDir, { recursive: true, mode: 0o700 });
  // First, so that a broken tokens file stops the start before anything else is opened.
  const authenticator = await Authenticator.load(config.auth, logger.child({ component: "auth" }));
  // Next, so that a key that does not open the secrets store stops the start before registry.db is opened.
  const secretStore = await openSecretStore(config, logger);
  const bus = await connectBus(config, logger);

  // Stores: the intake's parser checked, then registry.db and the canonical files, recovered.
  const intake = await startIntake(config, logger);
  const stores = await openControlStores(config, logger, intake);
  const { registry, store, mirror, composition, compositionDb } = stores;
  try {
    await checkComposedSkills(config, logger, composition);
  } catch (error) {
    await bus?.close();
    await closeControlStores(stores, intake);
    throw error;
  }

  // Planes.
  const metrics = new ServiceMetrics();
  const runner = createExecutionPlane(config, logger, bus, metrics);
  const folders = openFolderStores(config, compositionDb);
  const routing = await startRouting(config, logger.child({ component: "routing" }), registry, {
    metrics,
    describe: (skill) => folders.reads.header(skill) ?? { kind: composition.declaredOf(skill).kind, skillId: "" },
  });
  const playbook = await startPlaybookPlane(config, logger, {
    embedder: routing.embedder,
    canonicalDirectory: store.directory,
    metrics,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
  });
  const duplicates = createDuplicateScreen(config, routing.embedder, metrics);
  const environments = startEnvironments(config, logger, compositionDb, instanceTagOf(config.home), metrics);
  const control = createUseCases(config, logger, stores, {
    intake,
    runner,
    indexer: routing.service,
    duplicates: duplicates.screen,
    routingGate: routing.gate,
    folders: folders.reads,
    environments: environments.port,
    environmentAdmin: environments.admin,
    // Runs read the invoking agent's values through it (docs/security.md#declaring-and-delivering).
    secrets: secretStore,
  });
  const { skillSources, bundles } = await startSkillSources(config, logger, { stores: folders, registry, control, metrics });
  const learning = await startLearning(config, logger, {
    canonicalDirectory: store.directory,
    registry,
    control,
    events: duplicates.events,
    instructions: instructionsRegistrar(skillSources, folders),
  });

  // Server: the gRPC port (and the MCP door's private socket), then the metrics port and the MCP door; the
  // first engine probe says whether they serve.
  const mcpSocket = await privateSocketFor(config);
  const maxMessageBytes = messageLimits(config);
  const server = await startGrpcServer({
    learning: learning.service,
    secrets: createSecretsService(secretStore, control),
    host: config.host,
    port: config.port,
    control,
    routing: routing.service,
    sources: skillSources,
    bundles,
    playbook: playbook.service,
    authenticator,
    logger,
    metrics,
    ...(credentials ? { credentials } : {}),
    maxMessageBytes,
    ...(mcpSocket ? { privateSocket: mcpSocket.path } : {}),
  });
  attachServiceGauges(metrics, runner, registry);
  let closing: Promise<void> | undefined;
  const serving = new ServingState(server);
  const metricsServer = await startMetricsPort(config, logger, metrics, {
    // Over the bus, the runners' capacity (docs/execution-hosts.md#health).
    probes: { ready: () => serving.ready, detail: () => (bus ? (closing ? "shutting down" : serving.detail) : undefined) },
    console: { control, playbook: playbook.service, learning: learning.service, sources: skillSources, authenticator },
  });
  const mcpDoor = mcpSocket
    ? await startMcpDoor(config, logger, { socket: mcpSocket, authenticator, maxRequestBytes: maxMessageBytes.request })
    : undefined;
  const engine = keepEngineInService(config, logger, { runner, bus, serving });
  await engine.start();
  const retirementSweep = startRetirementSweep(config, logger, control);
  const lessonSweep = startLessonPruneSweep(config, logger, playbook.service);
  // Unused environments go after their grace; missing ones are not rebuilt here but on first use.
  const environmentSweep = startEnvironmentSweep(config, logger, environments, () => registry.environmentUses().keys());
  const { watcher: sourceWatcher, firstScan } = watchSkillFolders(config, logger, skillSources);

  const grace = new ShutdownGrace(server, runner, config.shutdownGraceMs, logger);
  const app: SkillEngineApp = {
    port: server.port,
    reconcileReport: stores.reconcileReport,
    migrationReport: stores.migrationReport,
    metricsPort: metricsServer?.port,
    mcpPort: mcpDoor?.port,
    reloadTokens: () => authenticator.reload(),
    endGrace() {
      if (closing) grace.cutShort();
    },
    close() {
      closing ??= (async () => {
        engine.stop();
        clearInterval(retirementSweep);
        clearInterval(lessonSweep);
        // Stopped now; a sweep in progress still writes registry.db, which closes last.
        const environmentSweepStopped = environmentSweep.stop();
        await sourceWatcher.close();
        serving.stop(); // /readyz: 503 from now on, like grpc.health.v1
        const outcome = await grace.drain();
        // Stops runs still going (their calls answer UNAVAILABLE) and removes every container.
        // A scan in progress may still be testing a folder; its run ends with the runner.
        const scanStopped = skillSources.close();
        await runner.close();
        await bus?.drain().catch(() => undefined);
        await scanStopped;
        if (outcome !== "drained") await grace.cutOff();
        // The door's calls were gRPC calls, drained above with the others; its sessions and port go now.
        await mcpDoor?.close();
        await mcpSocket?.remove();
        await metricsServer?.close();
        await mirror.close();
        await intake.close();
        await playbook.close();
        await learning.close();
        await routing.close();
        await environmentSweepStopped;
        await composition.close();
        if (compositionDb.open) compositionDb.close();
        registry.close();
        logger.info("skill engine stopped");
      })();
      return closing;
    },
  };
  // With skill directories, mandatory skills are checked once those were scanned (docs/composition.md#mandatory-skills).
  try {
    await checkMandatoryAfterScan(config, composition, firstScan);
  } catch (error) {
    await app.close();
    throw error;
  }

  const tls = config.tls !== undefined;
  logger.info(
    {
      host: config.host,
      port: server.port,
      tls,
      metricsPort: metricsServer?.port,
      mcpPort: mcpDoor?.port,
      home: config.home,
      sandboxDir: config.sandboxDir,
      image: config.image,
    },
    `skill engine listening on ${config.host}:${server.port} (${tls ? "TLS" : "plaintext"})`,
  );
  return app;
}

/**
 * Room in a message for what a run takes and gives (docs/files.md#message-sizes): a request holds
 * the input files plus 4 MiB for the rest of it; a response the inline output files plus 8 MiB
 * (stdout, stderr, steps), never less than before files existed.
 */
function messageLimits(config: SkillEngineConfig): { request: number; response: number } {
  const MiB = 1024 * 1024;
  return {
    request: Math.max(4 * MiB, config.inputFiles.maxTotalBytes + 4 * MiB),
    // GetSkill answers a version's test files, which may be as large as a run's input files (docs/files.md#test-files);
    // a run's answer carries its files and both streams, each up to SKILL_ENGINE_OUTPUT_LIMIT_BYTES.
    response: Math.max(
      8 * MiB,
      Math.max(config.limits.outputFiles.maxTotalBytes, config.inputFiles.maxTotalBytes) + 2 * config.limits.outputLimitBytes + 8 * MiB,
    ),
  };
}
