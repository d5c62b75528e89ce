import { createHash } from "node:crypto";
import { mkdir } from "node:fs/promises";
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../../config/index.js";
import { HostAllowList, ServiceMetrics, startMetricsServer } from "../../observability/index.js";
import { localExecutionPlane } from "../docker/index.js";
import { EngineUpkeep } from "../engine-upkeep.js";
import { connectToBus, RunServer, subjectsUnder } from "../nats/index.js";

export interface RunnerApp {
  readonly runnerId: string;
  readonly metricsPort: number | undefined;
  /** Stops taking runs, lets runs in flight finish for the shutdown grace, then stops what is left. */
  close(): Promise<void>;
  /** Ends the grace at once (a second signal). */
  endGrace(): void;
}

/**
 * A runner (docs/execution-hosts.md): owns the local Docker engine, its warm pool and its sandbox
 * directory, and executes the runs the control plane publishes on the bus. It keeps no skill
 * state: everything a run needs comes in its message. It labels its containers with an instance
 * tag derived from its id, so a restarted runner removes what its previous life left behind.
 */
export async function startRunner(config: SkillEngineConfig, logger: Logger): Promise<RunnerApp> {
  const runnerId = config.runnerId;
  await mkdir(config.sandboxDir, { recursive: true });
  const metrics = new ServiceMetrics();
  metrics.registry.setDefaultLabels({ runner: runnerId });
  const executor = localExecutionPlane(config, runnerInstanceTag(runnerId), logger.child({ component: "sandbox" }), metrics);
  const connection = await connectToBus(config.nats, `skill-engine runner ${runnerId}`, logger.child({ component: "bus" }));
  const server = new RunServer(executor, {
    connection,
    subjects: subjectsUnder(config.nats.subjectPrefix),
    runnerId,
    slots: config.maxConcurrentRuns,
    heartbeatMs: config.nats.heartbeatMs,
    logger: logger.child({ component: "run-server" }),
  });
  metrics.attach({
    queueDepth: () => executor.queueDepth,
    runningRuns: () => executor.runningRuns,
    warmIdle: () => executor.warmIdle,
    awaitingRemoval: () => executor.awaitingRemoval,
    skillsByStatus: () => ({}),
  });
  const upkeep = new EngineUpkeep({
    plane: executor,
    probeEveryMs: config.engineProbeMs,
    // What this runner's previous life left on the engine (it was killed mid-run).
    sweepEveryMs: config.sandboxSweepMs,
    logger,
    onHealth: (health) => {
      if (!health.ready) logger.warn({ detail: health.detail }, "sandbox engine not ready; this runner takes no runs until it is");
    },
    afterUpkeep: (health) => server.engineHealth(health),
  });
  const metricsServer =
    config.metricsPort === undefined
      ? undefined
      : await startMetricsServer(metrics, {
          host: config.host,
          port: config.metricsPort,
          allowedHosts: new HostAllowList(config.httpAllowedHosts),
          probes: { ready: () => upkeep.engineReady && !connection.isClosed() },
        });

  await upkeep.start();
  server.start();
  logger.info(
    {
      runnerId,
      slots: config.maxConcurrentRuns,
      bus: config.nats.servers,
      metricsPort: metricsServer?.port,
      sandboxDir: config.sandboxDir,
      image: config.image,
    },
    `skill engine runner ${runnerId} taking runs from ${config.nats.servers.join(", ")}`,
  );

  let closing: Promise<void> | undefined;
  let endGrace: (() => void) | undefined;
  const graceEndedEarly = new Promise<void>((resolve) => (endGrace = resolve));
  return {
    runnerId,
    metricsPort: metricsServer?.port,
    endGrace() {
      endGrace?.();
    },
    close() {
      closing ??= (async () => {
        upkeep.stop();
        const before = server.busy;
        logger.info(
          { runsInFlight: before, graceMs: config.shutdownGraceMs },
          "runner stopping: taking no more runs; letting runs in flight finish",
        );
        const drained = await Promise.race([
          server.stop().then(() => true),
          delay(config.shutdownGraceMs).then(() => false),
          graceEndedEarly.then(() => false),
        ]);
        if (!drained) logger.warn({ runsCutOff: server.busy }, "grace over: stopping the runs still going");
        // Stops what still runs (its caller hears UNAVAILABLE) and removes every container.
        await executor.close();
        await server.inFlight();
        server.close();
        await connection.drain().catch(() => undefined);
        await metricsServer?.close();
        logger.info("runner stopped");
      })();
      return closing;
    },
  };
}

/** Labels and run ids of a runner's containers: stable for a runner id, distinct from every service home's. */
export function runnerInstanceTag(runnerId: string): string {
  return `sr${createHash("sha256").update(`runner/${runnerId}`).digest("hex").slice(0, 12)}`;
}
