import pino from "pino";
import { loadConfigOrExplain } from "./config/index.js";
import { BusUnreachableError } from "./execution/nats/index.js";
import { startRunner } from "./execution/runner-host/index.js";

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
  let signals = 0;
  const stop = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 2) {
      logger.error({ signal }, "third signal: exiting without finishing the shutdown");
      process.exit(1);
    }
    if (signals > 1) {
      logger.warn({ signal }, "second signal: stopping runs in flight at once (a third one exits)");
      runner.endGrace();
      return;
    }
    logger.info(
      { signal, graceSeconds: config.shutdownGraceMs / 1000 },
      "runner shutting down (a second SIGTERM/SIGINT stops runs in flight at once)",
    );
    runner.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "runner shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

main().catch((error: unknown) => {
  if (error instanceof BusUnreachableError) {
    process.stderr.write(`skill-engine-runner: cannot start: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(
    `skill-engine-runner: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
