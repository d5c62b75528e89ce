import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "./config/index.js";
import {
  CanonicalStore,
  Composition,
  ConditionHost,
  CPythonSyntaxChecker,
  type LegacyMigrationReport,
  migrateLegacySkills,
  MirrorWriter,
  NormalizingGuardedIntake,
  reconcile,
  type ReconcileReport,
  REGISTRY_FILE,
  SkillRegistry,
  createControlPlane,
} from "./control/index.js";
import { FolderStore, SkillBundles, SkillSources, SourceStore, SourceWatcher } from "./sources/index.js";
import { FolderSkillReads } from "./sources/index.js";
import { connectToBus, type ExecutionPlane, localExecutionPlane, NatsSandboxRunner, runOutcome, subjectsUnder } from "./execution/index.js";
import { loadServerCredentials, startGrpcServer } from "./grpc/index.js";
import { Authenticator, serviceCaller } from "./identity/index.js";
import {
  HostAllowList,
  LearningMetrics,
  PlaybookMetrics,
  ServiceMetrics,
  SourceMetrics,
  startMetricsServer,
} from "./observability/index.js";
import { openRegistryDatabase } from "./sqlite/index.js";
import {
  CachedEmbedder,
  FallbackVectorIndex,
  KeywordIndex,
  OpenAiEmbedder,
  QdrantVectorIndex,
  qdrantCollectionName,
  RoutingService,
  SkillRouter,
  SqliteEmbeddingStore,
  SqliteVecIndex,
  UseLiteEmbedder,
  type Embedder,
  MiniLmEmbedder,
  type SkillDescriber,
  QualityCounters,
} from "./routing/index.js";
import { errorMessage } from "./errors/index.js";
import { createConsole } from "./console/index.js";
import { type Clock, createPlaybook, type PlaybookEvents, type PlaybookService } from "./playbook/index.js";
import { LearningMirror, LearningService, LearningStore, NearDuplicateDetector, NearDuplicateScreen } from "./learning/index.js";

/** A running service, as the entry point and the tests see it. */
export interface SkillEngineApp {
  readonly port: number;
  readonly reconcileReport: ReconcileReport;
  readonly migrationReport: LegacyMigrationReport;
  /** The metrics port actually bound, when metrics are on. */
  readonly metricsPort: number | undefined;
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

/** After the runs are stopped, how long their calls may take to deliver UNAVAILABLE before the connections are dropped. */
const CUT_OFF_DELIVERY_MS = 2_000;

/**
 * The composition root: config → stores → planes → server. Nothing else wires components or
 * decides start-up order.
 */
export async function startSkillEngine(
  config: SkillEngineConfig,
  logger: Logger,
  overrides: SkillEngineOverrides = {},
): Promise<SkillEngineApp> {
  // Unreadable TLS files stop the start before anything is opened.
  const credentials = config.tls ? await loadServerCredentials(config.tls) : undefined;
  await mkdir(config.home, { recursive: true, mode: 0o700 });
  await mkdir(config.sandboxDir, { recursive: true, mode: 0o700 });
  // First, so that a broken tokens file stops the start before anything else is opened.
  const authenticator = await Authenticator.load(config.auth, logger.child({ component: "auth" }));
  // Runs on runners over the bus (docs/execution-hosts.md): an unreachable bus stops the start here.
  const bus =
    config.execution === "nats"
      ? await connectToBus(config.nats, `skill-engine control plane ${instanceTagOf(config.home)}`, logger.child({ component: "bus" }))
      : undefined;

  const checker = new CPythonSyntaxChecker({ pythonPath: config.pythonPath, logger: logger.child({ component: "python-parser" }) });
  await assertParserWorks(checker, config.pythonPath);
  const intake = new NormalizingGuardedIntake(checker, config.contentGuard);
  if (config.contentGuard === "warn") logger.warn("content guard in warn mode: dangerous code is reported, not rejected");

  const registry = SkillRegistry.open(path.join(config.home, REGISTRY_FILE), config.healthPolicy, {
    telemetrySyncMs: config.telemetrySyncMs,
    sqliteCacheKib: config.sqliteCacheKib,
  });
  const store = new CanonicalStore(config.home);
  await store.init();
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
  try {
    const recovered = await composition.backfill();
    if (recovered > 0) logger.warn({ recovered }, "composed skills recognised from their canonical definitions");
    // Seed 002's boot failure: a mandatory skill that is missing or not ready stops the start.
    composition.assertMandatory(config.mandatorySkills);
  } catch (error) {
    await bus?.close();
    await mirror.close();
    await intake.close();
    await composition.close();
    compositionDb.close();
    registry.close();
    throw error;
  }

  const metrics = new ServiceMetrics();
  const runner: ExecutionPlane = bus
    ? new NatsSandboxRunner({
        connection: bus,
        subjects: subjectsUnder(config.nats.subjectPrefix),
        inboxPrefix: config.nats.subjectPrefix,
        heartbeatMs: config.nats.heartbeatMs,
        dispatchWaitMs: config.nats.dispatchWaitMs,
        logger: logger.child({ component: "dispatch" }),
        onRunFinished: (result, runPath, purpose) => metrics.recordRun(runOutcome(result), runPath, purpose, result.durationMs / 1000),
        onInfrastructureFault: (fault, purpose) => metrics.recordInfrastructureFault(fault, purpose),
      })
    : localExecutionPlane(config, instanceTagOf(config.home), logger.child({ component: "sandbox" }), metrics);
  // Skill folders (docs/skill-sources.md): their tables beside composition's, their canonical copies in the home.
  const sourceStore = new SourceStore(compositionDb);
  const folderStore = new FolderStore(config.home);
  const folderReads = new FolderSkillReads({ sources: sourceStore, folders: folderStore });
  const routing = await startRouting(config, logger.child({ component: "routing" }), registry, {
    metrics,
    describe: (skill) => folderReads.header(skill) ?? { kind: composition.declaredOf(skill).kind, skillId: "" },
  });
  const playbookMetrics = new PlaybookMetrics(metrics.registry);
  const playbook = await startPlaybook(config, logger.child({ component: "playbook" }), routing.embedder, store.directory, {
    events: playbookMetrics,
    ...(overrides.clock ? { clock: overrides.clock } : {}),
  });
  playbookMetrics.attach(() => playbook.service.countsByOwnerAndState());
  const learningMetrics = new LearningMetrics(metrics.registry);
  const duplicates = new NearDuplicateScreen(new NearDuplicateDetector(routing.embedder, config.learning.duplicates), (verdict) =>
    learningMetrics.nearDuplicate(verdict),
  );
  const control = createControlPlane({
    duplicates,
    composition,
    registry,
    store,
    runner,
    mirror,
    intake,
    policy: config.healthPolicy,
    indexer: routing.service,
    logger: logger.child({ component: "control" }),
    folders: folderReads,
  });
  const skillSources = new SkillSources({
    roots: config.skillSources.dirs,
    registry,
    skills: control.folderSkills,
    sources: sourceStore,
    folders: folderStore,
    logger: logger.child({ component: "skill-sources" }),
    maxFileBytes: config.skillSources.maxFileBytes,
  });
  const recoveredSources = await skillSources.backfill();
  if (recoveredSources > 0) logger.warn({ recovered: recoveredSources }, "folder skill versions recognised from their canonical records");
  const bundles = new SkillBundles({
    sources: skillSources,
    sourceStore,
    folders: folderStore,
    registry,
    queries: control.queries,
    stagingDir: path.join(config.home, "memory", ".bundle-staging"),
  });
  new SourceMetrics(metrics.registry).attach(() => skillSources.countsBySourceAndStatus());
  // Learning's own durable connection to registry.db (WAL), as the playbook's.
  const learningDb = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: true, cacheKib: config.sqliteCacheKib });
  const learningStore = new LearningStore(learningDb);
  const learningMirror = new LearningMirror(store.directory, learningStore, registry, logger.child({ component: "learning" }));
  const learningRestored = await learningMirror.init();
  if (learningRestored.candidates + learningRestored.outcomes > 0) logger.info(learningRestored, "learning restored from its mirror");
  const learning = new LearningService({
    store: learningStore,
    skills: control,
    registry,
    policy: config.learning,
    logger: logger.child({ component: "learning" }),
    mirror: learningMirror,
    events: learningMetrics,
  });
  learningMetrics.attach(() => learningStore.countsByStatus());
  const server = await startGrpcServer({
    learning,
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
  });
  metrics.attach({
    queueDepth: () => runner.queueDepth,
    runningRuns: () => runner.runningRuns,
    warmIdle: () => runner.warmIdle,
    awaitingRemoval: () => runner.awaitingRemoval,
    ...(runner instanceof NatsSandboxRunner ? { runners: () => runner.runners() } : {}),
    skillsByStatus: () => {
      const counts: Record<string, number> = {};
      for (const skill of registry.list({ includeInactive: true })) counts[skill.status] = (counts[skill.status] ?? 0) + 1;
      return counts;
    },
  });
  // What the last engine probe found; /readyz on the metrics port serves it as grpc.health.v1 does.
  let engineReady = false;
  let engineDetail = "not probed yet";
  const allowedHosts = new HostAllowList(config.httpAllowedHosts);
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics, {
          host: config.host,
          port: config.metricsPort,
          allowedHosts,
          // Over the bus, the runners' capacity (docs/execution-hosts.md#health).
          probes: { ready: () => engineReady, detail: () => (bus ? (closing ? "shutting down" : engineDetail) : undefined) },
          // The operator console shares the port (docs/console.md); off unless SKILL_ENGINE_CONSOLE=on.
          ...(config.console
            ? {
                mount: await createConsole({
                  control,
                  playbook: playbook.service,
                  learning,
                  sources: skillSources,
                  authenticator,
                  allowedHosts,
                  logger: logger.child({ component: "console" }),
                }),
              }
            : {}),
        });

  let started = false;
  let lastSweep = 0;
  let closing: Promise<void> | undefined;
  const probeEngine = async (): Promise<void> => {
    const health = await runner.health();
    // A probe that was under way when shutdown began must not say SERVING again or start the pool.
    if (closing) return;
    const cameBack = health.ready && !engineReady;
    // Over the bus the probe runs every beat: say so when readiness changes, not every time.
    const news = !bus || health.ready !== engineReady;
    engineReady = health.ready;
    engineDetail = health.detail;
    server.setServing(health.ready);
    if (!health.ready) {
      if (news) logger.warn({ detail: health.detail }, "sandbox engine not ready; runs answer UNAVAILABLE until it is");
      return;
    }
    if (bus && news) logger.info({ detail: health.detail }, "execution hosts ready");
    // What a crashed process left, and what this one could not remove while the engine was away
    // (docs/security.md#container-lifecycle-and-orphans): on every return of the engine, and periodically.
    const sweepDue = config.sandboxSweepMs > 0 && Date.now() - lastSweep >= config.sandboxSweepMs;
    if (cameBack || sweepDue) {
      lastSweep = Date.now();
      const reaped = await runner.reapOrphans();
      if (reaped.containers + reaped.runDirectories > 0)
        logger.warn(reaped, "removed sandbox containers and run directories no run tracks");
    }
    if (!started) {
      started = true;
      runner.startPool();
    }
  };
  // Over the bus, health is read from the runners' beats (no engine call): as often as they beat.
  const probeEveryMs = bus ? Math.min(config.engineProbeMs, config.nats.heartbeatMs) : config.engineProbeMs;
  await probeEngine().catch((error: unknown) => logger.error({ err: error }, "engine probe failed"));
  const probe = setInterval(() => {
    probeEngine().catch((error: unknown) => logger.error({ err: error }, "engine probe failed"));
  }, probeEveryMs);
  probe.unref();

  const sweep =
    config.retireSweepMinutes > 0
      ? setInterval(() => {
          control.retirementSweep
            .sweep({ dryRun: false }, { caller: serviceCaller("retire-sweep") })
            .catch((error: unknown) => logger.error({ err: error }, "retirement sweep failed"));
        }, config.retireSweepMinutes * 60_000)
      : undefined;
  sweep?.unref();
  const lessonSweep =
    config.playbook.pruneSweepMinutes > 0
      ? setInterval(() => {
          playbook.service
            .prune({ minRetrievals: 0, maxDropFraction: undefined, dryRun: false }, serviceCaller("lesson-prune-sweep"))
            .catch((error: unknown) => logger.error({ err: error }, "lesson prune sweep failed"));
        }, config.playbook.pruneSweepMinutes * 60_000)
      : undefined;
  lessonSweep?.unref();

  // The first scan runs beside serving (executable folders wait for their test runs); hot reload after it.
  const sourceWatcher = new SourceWatcher({
    roots: config.skillSources.watch ? config.skillSources.dirs : [],
    rescan: async () => ({ folders: (await skillSources.rescan()).entries.map((entry) => entry.folder) }),
    logger: logger.child({ component: "skill-sources" }),
    debounceMs: config.skillSources.debounceMs,
    intervalMs: config.skillSources.rescanMs,
  });
  if (config.skillSources.dirs.length > 0) {
    void skillSources.rescan().catch((error: unknown) => logger.error({ err: error }, "first scan of the skill directories failed"));
    sourceWatcher.start();
  }

  // Every registration is screened against the skills its caller sees: embed their descriptions now,
  // off any caller's wait (docs/performance.md#the-screen-is-prepared-at-start).
  const preparing = performance.now();
  const described = registry.describedSkills();
  void duplicates.prepare(described.map((skill) => skill.description)).then(
    (embedded) =>
      logger.info({ skills: described.length, embedded, ms: Math.round(performance.now() - preparing) }, "near-duplicate screen prepared"),
    (error: unknown) => {
      // A stop while it runs closes the embedder under it: nothing to report then.
      if (!closing) logger.warn({ err: error }, "could not prepare the near-duplicate screen; registrations embed what they need");
    },
  );

  const tls = config.tls !== undefined;
  logger.info(
    {
      host: config.host,
      port: server.port,
      tls,
      metricsPort: metricsServer?.port,
      home: config.home,
      sandboxDir: config.sandboxDir,
      image: config.image,
    },
    `skill engine listening on ${config.host}:${server.port} (${tls ? "TLS" : "plaintext"})`,
  );

  let endGrace: (() => void) | undefined;
  const graceEndedEarly = new Promise<"cut short">((resolve) => {
    endGrace = () => resolve("cut short");
  });
  const runsInFlight = (): number => runner.runningRuns + runner.queueDepth;
  return {
    port: server.port,
    reconcileReport,
    migrationReport,
    metricsPort: metricsServer?.port,
    reloadTokens: () => authenticator.reload(),
    endGrace() {
      if (closing) endGrace?.();
    },
    close() {
      closing ??= (async () => {
        clearInterval(probe);
        if (sweep) clearInterval(sweep);
        if (lessonSweep) clearInterval(lessonSweep);
        await sourceWatcher.close();
        server.setServing(false);
        engineReady = false; // /readyz: 503 from now on, like grpc.health.v1
        const graceMs = config.shutdownGraceMs;
        const before = { calls: server.calls.inFlight, callsFinished: server.calls.finished, runs: runsInFlight() };
        const drained = server.drain().then(() => "drained" as const);
        logger.info(
          { graceMs, callsInFlight: before.calls, runsInFlight: before.runs },
          "shutting down: no new calls; letting calls in flight finish",
        );
        let timer: NodeJS.Timeout | undefined;
        const graceOver = new Promise<"grace over">((resolve) => {
          timer = setTimeout(() => resolve("grace over"), graceMs);
        });
        const outcome = await Promise.race([drained, graceOver, graceEndedEarly]);
        clearTimeout(timer);
        const cutOff = outcome === "drained" ? { calls: 0, runs: 0 } : { calls: server.calls.inFlight, runs: runsInFlight() };
        const summary = {
          callsDrained: server.calls.finished - before.callsFinished,
          callsCutOff: cutOff.calls,
          runsDrained: Math.max(0, before.runs - cutOff.runs),
          runsCutOff: cutOff.runs,
        };
        if (outcome === "cut short") logger.warn(summary, "drain cut short: stopping what is still running");
        else if (outcome === "grace over" && (cutOff.calls > 0 || cutOff.runs > 0))
          logger.warn(summary, "grace over: stopping what is still running");
        else logger.info(summary, "calls in flight drained");
        // Stops runs still going (their calls answer UNAVAILABLE) and removes every container.
        // A scan in progress may still be testing a folder; its run ends with the runner.
        const scanStopped = skillSources.close();
        await runner.close();
        await bus?.drain().catch(() => undefined);
        await scanStopped;
        if (outcome !== "drained") {
          // Let the stopped runs' calls deliver their answer, then drop whatever is left.
          await Promise.race([drained, delay(CUT_OFF_DELIVERY_MS)]);
          server.forceClose();
        }
        await metricsServer?.close();
        await mirror.close();
        await intake.close();
        await playbook.close();
        await learningMirror.close();
        if (learningDb.open) learningDb.close();
        await routing.close();
        await composition.close();
        if (compositionDb.open) compositionDb.close();
        registry.close();
        logger.info("skill engine stopped");
      })();
      return closing;
    },
  };
}

/**
 * Routing beside the registry: its own connection to registry.db (WAL lets both write), the
 * embedded indexes (sqlite-vec, FTS5) always, Qdrant in front of them when configured.
 */
export async function startRouting(
  config: SkillEngineConfig,
  logger: Logger,
  registry: SkillRegistry,
  wiring: { readonly metrics?: ServiceMetrics; readonly describe?: SkillDescriber } = {},
): Promise<{ service: RoutingService; embedder: Embedder; close(): Promise<void> }> {
  const { metrics, describe } = wiring;
  const db = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: false, cacheKib: config.sqliteCacheKib });
  const backend =
    config.embedder.kind === "openai"
      ? await OpenAiEmbedder.create({
          baseUrl: config.embedder.baseUrl,
          model: config.embedder.model,
          timeoutMs: 30_000,
          ...(config.embedder.apiKey ? { apiKey: config.embedder.apiKey } : {}),
          ...(config.embedder.dimensions ? { dimensions: config.embedder.dimensions } : {}),
        })
      : config.embedder.kind === "use-lite"
        ? new UseLiteEmbedder({ logger })
        : new MiniLmEmbedder({ logger, runtime: config.embedder.runtime });
  const embedder = new CachedEmbedder(backend, new SqliteEmbeddingStore(db));
  const embedded = new SqliteVecIndex(db, { logger });
  const vectors = config.qdrant
    ? new FallbackVectorIndex(
        new QdrantVectorIndex({
          url: config.qdrant.url,
          collection: qdrantCollectionName(embedder.modelId, embedder.dimensions),
          logger,
          ...(config.qdrant.apiKey ? { apiKey: config.qdrant.apiKey } : {}),
        }),
        embedded,
        { logger, onUnavailable: (reason) => metrics?.recordVectorIndexUnavailable(reason) },
      )
    : embedded;
  const router = new SkillRouter({
    db,
    embedder,
    vectors,
    keywords: new KeywordIndex(db, { logger }),
    logger,
    vectorWeight: config.routing.vectorWeight,
    splitClauses: config.routing.splitClauses,
  });
  const service = new RoutingService(
    router,
    registry,
    config.healthPolicy,
    logger,
    { minRelevance: config.routing.minRelevance, ...(describe ? { describe } : {}) },
    new QualityCounters(db),
  );
  await service.init();
  return {
    service,
    embedder,
    async close() {
      // Indexing handed over by the last changes finishes before the database closes.
      await service.settled();
      await (backend as { close?: () => Promise<void> }).close?.();
      await vectors.close();
      if (db.open) db.close();
    },
  };
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
): Promise<{ service: PlaybookService; close(): Promise<void> }> {
  const db = openRegistryDatabase(path.join(config.home, REGISTRY_FILE), { durable: true, cacheKib: config.sqliteCacheKib });
  const embedded = new SqliteVecIndex(db, { table: "lesson_vectors", logger });
  const vectors = config.qdrant
    ? new FallbackVectorIndex(
        new QdrantVectorIndex({
          url: config.qdrant.url,
          // Named per embedder, like the skills' collection (docs/routing.md#qdrant).
          collection: qdrantCollectionName(embedder.modelId, embedder.dimensions, "skill_engine_lessons"),
          logger,
          ...(config.qdrant.apiKey ? { apiKey: config.qdrant.apiKey } : {}),
        }),
        embedded,
        { logger },
      )
    : embedded;
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

/** A short, stable id for this home directory: labels containers and prefixes run ids. */
export function instanceTagOf(home: string): string {
  return `se${createHash("sha256").update(path.resolve(home)).digest("hex").slice(0, 12)}`;
}
