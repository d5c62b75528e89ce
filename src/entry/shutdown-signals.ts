import type { Logger } from "pino";

/** What an entry point stops: the service, or a runner (docs/execution-hosts.md#vocabulary). */
export interface Stoppable {
  /** Drains for the shutdown grace, then stops what is left. */
  close(): Promise<void>;
  /** Ends the grace of a close() in progress at once. */
  endGrace(): void;
}

export interface ShutdownSignalsOptions {
  readonly logger: Logger;
  readonly target: Stoppable;
  /** The shutdown grace, for the first signal's log line. */
  readonly graceMs: number;
  /** The log lines that differ between the two programs. */
  readonly messages: {
    readonly shuttingDown: string;
    readonly secondSignal: string;
    readonly shutdownFailed: string;
  };
  /**
   * What SIGHUP re-reads (the service's tokens). Without it SIGHUP keeps Node's default: the
   * process ends, as it always has for a runner.
   */
  readonly onReload?: () => void;
}

/**
 * The signals of both entry points (docs/operations.md#signals): the first SIGTERM/SIGINT drains (calls
 * and runs in flight get the shutdown grace, then the process exits 0, or 1 if the shutdown failed);
 * a second one ends the grace at once (runs still going are stopped and their containers removed);
 * a third exits at once with code 1, since the engine itself may hang while containers are removed
 * and the operator keeps the last word. A rejection nobody handled is logged, never fatal: a bug in
 * one request must not take every other caller down with it.
 */
export function handleShutdownSignals(options: ShutdownSignalsOptions): void {
  const { logger, target, messages } = options;
  let signals = 0;
  const stop = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 2) {
      logger.error({ signal }, "third signal: exiting without finishing the shutdown");
      process.exit(1);
    }
    if (signals > 1) {
      logger.warn({ signal }, messages.secondSignal);
      target.endGrace();
      return;
    }
    logger.info({ signal, graceSeconds: options.graceMs / 1000 }, messages.shuttingDown);
    target.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, messages.shutdownFailed);
        process.exit(1);
      },
    );
  };
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  const reload = options.onReload;
  if (reload) process.on("SIGHUP", () => reload());
}

/**
 * Ends a program that could not start: exit 2 with the problem alone for an operator's mistake (a
 * bad setting or file, an unreachable bus), exit 1 with the stack for anything else (a bug).
 */
export function exitOnStartFailure(program: string, error: unknown, operatorMistake: boolean): never {
  if (operatorMistake) {
    process.stderr.write(`${program}: cannot start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  process.stderr.write(`${program}: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
}
