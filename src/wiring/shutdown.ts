import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "pino";
import type { PlaneGauges } from "../execution/index.js";
import type { RunningGrpcServer } from "../grpc/index.js";

/** After the runs are stopped, how long their calls may take to deliver UNAVAILABLE before the connections are dropped. */
const CUT_OFF_DELIVERY_MS = 2_000;

/** How the grace of a shutdown ended: every call finished, the grace ran out, or a second signal cut it short. */
export type DrainOutcome = "drained" | "grace over" | "cut short";

/**
 * The grace of a graceful shutdown (docs/operations.md#graceful-shutdown): no new call is accepted; calls in flight
 * get `graceMs` to finish, unless a second signal cuts it short; once the owner has stopped the runs
 * still going, their calls get a moment to deliver their answer before the connections are dropped.
 */
export class ShutdownGrace {
  private readonly endedEarly: Promise<"cut short">;
  private endEarly: () => void = () => undefined;
  private drained: Promise<"drained"> | undefined;

  constructor(
    private readonly server: Pick<RunningGrpcServer, "calls" | "drain" | "forceClose">,
    private readonly plane: PlaneGauges,
    private readonly graceMs: number,
    private readonly logger: Logger,
  ) {
    this.endedEarly = new Promise<"cut short">((resolve) => {
      this.endEarly = () => resolve("cut short");
    });
  }

  /** Ends the grace now (a second SIGTERM/SIGINT). */
  cutShort(): void {
    this.endEarly();
  }

  /** Stops accepting calls and waits for those in flight until they finish or the grace ends; logs what it drained and what is left. */
  async drain(): Promise<DrainOutcome> {
    const { server, graceMs, logger } = this;
    const before = { calls: server.calls.inFlight, callsFinished: server.calls.finished, runs: this.runsInFlight() };
    const drained = server.drain().then(() => "drained" as const);
    this.drained = drained;
    logger.info(
      { graceMs, callsInFlight: before.calls, runsInFlight: before.runs },
      "shutting down: no new calls; letting calls in flight finish",
    );
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<"grace over">((resolve) => {
      timer = setTimeout(() => resolve("grace over"), graceMs);
    });
    const outcome = await Promise.race([drained, graceOver, this.endedEarly]);
    clearTimeout(timer);
    const cutOff = outcome === "drained" ? { calls: 0, runs: 0 } : { calls: server.calls.inFlight, runs: this.runsInFlight() };
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
    return outcome;
  }

  /** Once the runs are stopped: lets their calls deliver their answer, then drops whatever is left. */
  async cutOff(): Promise<void> {
    await Promise.race([this.drained, delay(CUT_OFF_DELIVERY_MS)]);
    this.server.forceClose();
  }

  private runsInFlight(): number {
    return this.plane.runningRuns + this.plane.queueDepth;
  }
}
