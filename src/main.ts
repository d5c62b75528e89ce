import pino from "pino";
import { startSkillEngine } from "./app.js";
import { loadConfigOrExplain } from "./config/index.js";
import { MandatorySkillError } from "./control/index.js";
import { BusUnreachableError } from "./execution/nats/index.js";
import { TlsFilesError } from "./grpc/index.js";
import { TokenListError } from "./identity/index.js";

/**
 * Entry point: `npm start`. Reads the environment once, starts, stops cleanly on SIGINT/SIGTERM and
 * re-reads the tokens file on SIGHUP.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExplain("skill-engine", process.env);
  if (!config) process.exit(2);
  const logger = pino({ level: config.logLevel, base: { service: "skill-engine" } });
  const app = await startSkillEngine(config, logger);
  // The first signal drains (calls in flight get SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS to finish);
  // a second one ends the grace at once: runs still going are stopped and their containers removed.
  let signals = 0;
  const stop = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 2) {
      // The engine itself may hang while containers are removed: the operator keeps the last word.
      logger.error({ signal }, "third signal: exiting without finishing the shutdown");
      process.exit(1);
    }
    if (signals > 1) {
      logger.warn({ signal }, "second signal: cutting the drain short (a third one exits at once)");
      app.endGrace();
      return;
    }
    logger.info(
      { signal, graceSeconds: config.shutdownGraceMs / 1000 },
      "shutting down (a second SIGTERM/SIGINT stops runs in flight at once)",
    );
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  // A bug in one request must not take every other caller down with it: log loudly, keep serving.
  process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  process.on("SIGHUP", () => {
    app.reloadTokens().then(
      ({ agents }) => logger.info({ agents }, "tokens reloaded (SIGHUP)"),
      () => undefined, // already logged: the previous tokens stay in force
    );
  });
}

main().catch((error: unknown) => {
  if (
    error instanceof TokenListError ||
    error instanceof TlsFilesError ||
    error instanceof MandatorySkillError ||
    error instanceof BusUnreachableError
  ) {
    // An operator's mistake, not a bug: the problems without a stack.
    process.stderr.write(`skill-engine: cannot start: ${error.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`skill-engine: failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
