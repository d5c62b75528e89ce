import pino from "pino";
import { startSkillEngine } from "./app.js";
import { loadConfigOrExplain } from "./config/index.js";

/** Entry point: `npm start`. Reads the environment once, starts, and stops cleanly on SIGINT/SIGTERM. */
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
    if (signals > 1) {
      logger.warn({ signal }, "second signal: cutting the drain short");
      app.endGrace();
      return;
    }
    logger.info({ signal, graceSeconds: config.shutdownGraceMs / 1000 }, "shutting down (a second SIGTERM/SIGINT stops runs in flight at once)");
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
}

main().catch((error: unknown) => {
  process.stderr.write(`skill-engine: failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
