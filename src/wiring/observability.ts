import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import { createConsole, type ConsoleOptions } from "../console/index.js";
import type { SkillRegistry } from "../control/index.js";
import { type EngineHealth, type ExecutionPlane, NatsSandboxRunner } from "../execution/index.js";
import type { RunningGrpcServer } from "../grpc/index.js";
import { HostAllowList, type ServiceMetrics, startMetricsServer } from "../observability/index.js";

/**
 * One answer to "does this service take calls?" for both doors: grpc.health.v1 on the gRPC port and
 * /readyz on the metrics port. It follows the engine probe until shutdown turns it off for good.
 */
export class ServingState {
  private engineReady = false;
  private engineDetail = "not probed yet";

  constructor(private readonly server: Pick<RunningGrpcServer, "setServing">) {}

  get ready(): boolean {
    return this.engineReady;
  }

  /** What the last engine probe said. */
  get detail(): string {
    return this.engineDetail;
  }

  follow(health: EngineHealth): void {
    this.engineReady = health.ready;
    this.engineDetail = health.detail;
    this.server.setServing(health.ready);
  }

  /** Health says NOT_SERVING and /readyz 503 from now on. */
  stop(): void {
    this.server.setServing(false);
    this.engineReady = false;
  }
}

/** The figures /metrics reads at scrape time: the execution plane's gauges and the skills by status. */
export function attachServiceGauges(metrics: ServiceMetrics, runner: ExecutionPlane, registry: SkillRegistry): void {
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
}

/**
 * The metrics port, when configured: /metrics, /healthz, /readyz (which says what `probes` say), and
 * the operator console beside them when SKILL_ENGINE_CONSOLE=on (docs/console.md).
 */
export async function startMetricsPort(
  config: SkillEngineConfig,
  logger: Logger,
  metrics: ServiceMetrics,
  parts: {
    readonly probes: { ready(): boolean; detail(): string | undefined };
    /** What the console serves; its host list and logger come from here. */
    readonly console: Omit<ConsoleOptions, "allowedHosts" | "logger">;
  },
): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const allowedHosts = new HostAllowList(config.httpAllowedHosts);
  if (config.metricsPort === undefined) return undefined;
  return startMetricsServer(metrics, {
    host: config.host,
    port: config.metricsPort,
    allowedHosts,
    probes: parts.probes,
    ...(config.console
      ? { mount: await createConsole({ ...parts.console, allowedHosts, logger: logger.child({ component: "console" }) }) }
      : {}),
  });
}
