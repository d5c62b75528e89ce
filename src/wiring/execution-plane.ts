import { createHash } from "node:crypto";
import path from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import {
  connectToBus,
  EngineUpkeep,
  type ExecutionPlane,
  localExecutionPlane,
  NatsSandboxRunner,
  runOutcome,
  subjectsUnder,
} from "../execution/index.js";
import type { ServiceMetrics } from "../observability/index.js";
import type { ServingState } from "./observability.js";

/** A short, stable id for this home directory: labels containers and prefixes run ids. */
export function instanceTagOf(home: string): string {
  return `se${createHash("sha256").update(path.resolve(home)).digest("hex").slice(0, 12)}`;
}

/** Runs on runners over the bus (docs/execution-hosts.md): an unreachable bus stops the start here. */
export async function connectBus(config: SkillEngineConfig, logger: Logger): Promise<NatsConnection | undefined> {
  if (config.execution !== "nats") return undefined;
  return connectToBus(config.nats, `skill-engine control plane ${instanceTagOf(config.home)}`, logger.child({ component: "bus" }));
}

/** The sandbox-runner port the use cases run through: the bus when connected, the local Docker engine otherwise. */
export function createExecutionPlane(
  config: SkillEngineConfig,
  logger: Logger,
  bus: NatsConnection | undefined,
  metrics: ServiceMetrics,
): ExecutionPlane {
  return bus
    ? new NatsSandboxRunner({
        connection: bus,
        subjects: subjectsUnder(config.nats.subjectPrefix),
        inboxPrefix: config.nats.subjectPrefix,
        heartbeatMs: config.nats.heartbeatMs,
        dispatchWaitMs: config.nats.dispatchWaitMs,
        logger: logger.child({ component: "dispatch" }),
        onRunFinished: (result, runPath, purpose, inputFiles) => {
          metrics.recordRun(runOutcome(result), runPath, purpose, result.durationMs / 1000);
          metrics.recordRunFiles(purpose, inputFiles, result.outputFiles ?? []);
        },
        onInfrastructureFault: (fault, purpose) => metrics.recordInfrastructureFault(fault, purpose),
      })
    : localExecutionPlane(config, instanceTagOf(config.home), logger.child({ component: "sandbox" }), metrics);
}

/**
 * The engine probe behind grpc.health.v1 and /readyz: each probe's answer sets what the service says,
 * and a ready engine gets its orphans swept and its warm pool started. Call `start()` once the doors are up.
 */
export function keepEngineInService(
  config: SkillEngineConfig,
  logger: Logger,
  parts: { readonly runner: ExecutionPlane; readonly bus: NatsConnection | undefined; readonly serving: ServingState },
): EngineUpkeep {
  const { runner, bus, serving } = parts;
  return new EngineUpkeep({
    plane: runner,
    // Over the bus, health is read from the runners' beats (no engine call): as often as they beat.
    probeEveryMs: bus ? Math.min(config.engineProbeMs, config.nats.heartbeatMs) : config.engineProbeMs,
    sweepEveryMs: config.sandboxSweepMs,
    logger,
    onHealth: (health, wasReady) => {
      serving.follow(health);
      // Over the bus the probe runs every beat: say so when readiness changes, not every time.
      const news = !bus || health.ready !== wasReady;
      if (!health.ready) {
        if (news) logger.warn({ detail: health.detail }, "sandbox engine not ready; runs answer UNAVAILABLE until it is");
      } else if (bus && news) logger.info({ detail: health.detail }, "execution hosts ready");
    },
  });
}
