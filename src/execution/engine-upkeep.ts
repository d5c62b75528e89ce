import type { Logger } from "pino";
import type { EngineHealth, ExecutionPlane } from "./sandbox-runner.js";

/** What {@link EngineUpkeep} needs: the plane it keeps, how often, and what its owner does with each probe. */
export interface EngineUpkeepOptions {
  readonly plane: Pick<ExecutionPlane, "health" | "reapOrphans" | "startPool">;
  /** Time between probes. */
  readonly probeEveryMs: number;
  /** Time between orphan sweeps while the engine stays up; 0: only when it comes back. */
  readonly sweepEveryMs: number;
  readonly logger: Logger;
  /**
   * Each probe's answer, before any sweep: the owner's readiness and what it logs about it.
   * `wasReady` is what the previous probe found (false before the first).
   */
  readonly onHealth?: (health: EngineHealth, wasReady: boolean) => void;
  /** Each probe's answer again once the sweep and the pool's start are done (a runner offers its slots then). */
  readonly afterUpkeep?: (health: EngineHealth) => void;
}

/**
 * Keeps an execution plane in service, for the service and a runner alike: probes its engine (or,
 * over the bus, the runners' beats) now and every `probeEveryMs`; when the engine is ready, removes
 * what a crashed process left and what could not be removed while the engine was away
 * (docs/security.md#container-lifecycle-and-orphans), on every return of the engine and every
 * `sweepEveryMs`; and starts the warm pool once, on the first ready probe.
 */
export class EngineUpkeep {
  private ready = false;
  private stopped = false;
  private lastSweep = 0;
  private poolStarted = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: EngineUpkeepOptions) {}

  /** What the last probe found; false before the first. */
  get engineReady(): boolean {
    return this.ready;
  }

  /** Probes once now (a failure is logged, not thrown), then every `probeEveryMs` until {@link stop}. */
  async start(): Promise<void> {
    await this.probeLogged();
    if (this.stopped) return;
    this.timer = setInterval(() => {
      void this.probeLogged();
    }, this.options.probeEveryMs);
    this.timer.unref();
  }

  /** No probe after this; one under way ends without effect (it must not say ready again or start the pool). */
  stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
  }

  private probeLogged(): Promise<void> {
    return this.probe().catch((error: unknown) => this.options.logger.error({ err: error }, "engine probe failed"));
  }

  private async probe(): Promise<void> {
    const { plane, logger, sweepEveryMs } = this.options;
    const health = await plane.health();
    if (this.stopped) return;
    const wasReady = this.ready;
    this.ready = health.ready;
    this.options.onHealth?.(health, wasReady);
    if (health.ready) {
      const sweepDue = sweepEveryMs > 0 && Date.now() - this.lastSweep >= sweepEveryMs;
      if (!wasReady || sweepDue) {
        this.lastSweep = Date.now();
        const reaped = await plane.reapOrphans();
        if (reaped.containers + reaped.runDirectories > 0)
          logger.warn(reaped, "removed sandbox containers and run directories no run tracks");
      }
      if (!this.poolStarted) {
        this.poolStarted = true;
        plane.startPool();
      }
    }
    this.options.afterUpkeep?.(health);
  }
}
