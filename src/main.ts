import pino from "pino";
import { startSkillEngine } from "./app.js";
import { loadConfigOrExplain } from "./config/index.js";

/** Entry point: `npm start`. Reads the environment once, starts, and stops cleanly on SIGINT/SIGTERM. */
async function main(): Promise<void> {
  const config = loadConfigOrExplain("skill-engine", process.env);
  if (!config) process.exit(2);
  const logger = pino({ level: config.logLevel, base: { service: "skill-engine" } });
  const app = await startSkillEngine(config, logger);
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, "shutting down");
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
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`skill-engine: failed to start: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
