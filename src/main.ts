import pino from "pino";
import { startSkillEngine } from "./app.js";
import { loadConfigOrExplain } from "./config/index.js";
import { MandatorySkillError } from "./control/index.js";
import { exitOnStartFailure, handleShutdownSignals } from "./entry/index.js";
import { BusUnreachableError } from "./execution/index.js";
import { TlsFilesError } from "./grpc/index.js";
import { TokenListError } from "./identity/index.js";
import { SecretsStoreError } from "./secrets/index.js";

/**
 * Entry point: `npm start`. Reads the environment once, starts, stops cleanly on SIGINT/SIGTERM (a
 * second signal cuts the grace short, a third exits at once) and re-reads the tokens file on SIGHUP.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExplain("skill-engine", process.env);
  if (!config) process.exit(2);
  const logger = pino({ level: config.logLevel, base: { service: "skill-engine" } });
  const app = await startSkillEngine(config, logger);
  handleShutdownSignals({
    logger,
    target: app,
    graceMs: config.shutdownGraceMs,
    messages: {
      shuttingDown: "shutting down (a second SIGTERM/SIGINT stops runs in flight at once)",
      secondSignal: "second signal: cutting the drain short (a third one exits at once)",
      shutdownFailed: "shutdown failed",
    },
    onReload: () => {
      app.reloadTokens().then(
        ({ agents }) => logger.info({ agents }, "tokens reloaded (SIGHUP)"),
        () => undefined, // already logged: the previous tokens stay in force
      );
    },
  });
}

main().catch((error: unknown) => {
  const operatorMistake =
    error instanceof TokenListError ||
    error instanceof TlsFilesError ||
    error instanceof MandatorySkillError ||
    error instanceof SecretsStoreError ||
    error instanceof BusUnreachableError;
  exitOnStartFailure("skill-engine", error, operatorMistake);
});
