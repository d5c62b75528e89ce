import pino from "pino";
import { loadConfigOrExplain } from "./config/index.js";
import { exitOnStartFailure, handleShutdownSignals } from "./entry/index.js";
import { BusUnreachableError, startRunner } from "./execution/index.js";

/**
 * Entry point of a runner (`npm run runner`, docs/execution-hosts.md): an execution host that
 * takes runs from the bus. Stops cleanly on SIGINT/SIGTERM (a second signal cuts the grace short,
 * a third exits at once).
 */
async function main(): Promise<void> {
  const config = loadConfigOrExplain("skill-engine-runner", process.env);
  if (!config) process.exit(2);
  const logger = pino({ level: config.logLevel, base: { service: "skill-engine-runner", runner: config.runnerId } });
  const runner = await startRunner(config, logger);
  handleShutdownSignals({
    logger,
    target: runner,
    graceMs: config.shutdownGraceMs,
    messages: {
      shuttingDown: "runner shutting down (a second SIGTERM/SIGINT stops runs in flight at once)",
      secondSignal: "second signal: stopping runs in flight at once (a third one exits)",
      shutdownFailed: "runner shutdown failed",
    },
  });
}

main().catch((error: unknown) => exitOnStartFailure("skill-engine-runner", error, error instanceof BusUnreachableError));
