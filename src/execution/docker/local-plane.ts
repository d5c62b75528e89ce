import Docker from "dockerode";
import type { Logger } from "pino";
import { dockerConnection, type SkillEngineConfig } from "../../config/index.js";
import type { ServiceMetrics } from "../../observability/index.js";
import { runOutcome } from "../sandbox-runner.js";
import { DockerSandboxRunner } from "./docker-sandbox-runner.js";
import { SandboxImageInfo } from "./sandbox-image-info.js";

/**
 * The local Docker engine as an execution plane, configured from the service's settings: what the
 * embedded service runs on (SKILL_ENGINE_EXECUTION=local) and what a runner process serves over the bus.
 */
export function localExecutionPlane(
  config: SkillEngineConfig,
  instanceTag: string,
  logger: Logger,
  metrics: ServiceMetrics,
): DockerSandboxRunner {
  return new DockerSandboxRunner({
    docker: new Docker(dockerConnection(config.dockerHost)),
    logger,
    image: config.image,
    runtime: config.runtime,
    sandboxDir: config.sandboxDir,
    instanceTag,
    limits: config.limits,
    maxConcurrentRuns: config.maxConcurrentRuns,
    maxQueuedRuns: config.maxQueuedRuns,
    maxQueuedRunsPerAgent: config.maxQueuedRunsPerAgent,
    maxQueuedRunsByAgent: config.maxQueuedRunsByAgent,
    warmPoolSize: config.warmPoolSize,
    warmIdleMs: config.warmIdleMs,
    environmentPools: config.environmentWarmPools,
    environmentPoolSize: config.environmentPoolSize,
    poolPauseAtRuns: config.poolPauseAtRuns,
    removalWorkers: config.removalWorkers,
    maxAwaitingRemoval: config.maxAwaitingRemoval,
    onRunFinished: (result, runPath, purpose, inputFiles) => {
      metrics.recordRun(runOutcome(result), runPath, purpose, result.durationMs / 1000);
      metrics.recordRunFiles(purpose, inputFiles, result.outputFiles ?? []);
    },
    onInfrastructureFault: (fault, purpose) => metrics.recordInfrastructureFault(fault, purpose),
    // The way out for runs that declared hosts (docs/security.md#egress): the same settings serve the
    // embedded service's runs and, in a runner process, the runs it takes from the bus.
    egress: {
      hostMap: config.egress.hostMap,
      limits: config.egress.limits,
      onConnection: (connection) => metrics.recordEgress(connection),
    },
  });
}

/** The sandbox image of the local Docker engine, as environments need to know it (docs/packages.md#environments). */
export function localSandboxImage(config: SkillEngineConfig, instanceTag: string): SandboxImageInfo {
  return new SandboxImageInfo(new Docker(dockerConnection(config.dockerHost)), config.image, instanceTag);
}
