import { readFile } from "node:fs/promises";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { NatsSettings } from "../config/index.js";

/**
 * Connects to the bus with the configured credentials and TLS. The client reconnects by itself
 * for as long as the process lives (a bus restart is an outage, not the end); the first connection
 * must succeed, so a wrong address is told at start-up.
 */
export async function connectToBus(settings: NatsSettings, name: string, logger: Logger): Promise<NatsConnection> {
  const connection = await connect({
    servers: [...settings.servers],
    name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    ...(settings.credsFile ? { authenticator: credsAuthenticator(new Uint8Array(await readFile(settings.credsFile))) } : {}),
    ...(settings.token ? { token: settings.token } : {}),
    ...(settings.user ? { user: settings.user, pass: settings.password ?? "" } : {}),
    ...(settings.tls
      ? {
          tls: {
            ...(settings.tls.caFile ? { caFile: settings.tls.caFile } : {}),
            ...(settings.tls.certFile ? { certFile: settings.tls.certFile } : {}),
            ...(settings.tls.keyFile ? { keyFile: settings.tls.keyFile } : {}),
          },
        }
      : {}),
  }).catch((error: unknown) => {
    throw new BusUnreachableError(
      `cannot connect to the NATS bus at ${settings.servers.join(", ")}: ${error instanceof Error ? error.message : String(error)}; ` +
        "start nats-server or set SKILL_ENGINE_NATS_URL",
      { cause: error },
    );
  });
  void (async () => {
    for await (const event of connection.status()) {
      if (event.type === "disconnect" || event.type === "reconnect")
        logger.warn({ event: event.type, server: event.server }, `message bus ${event.type}`);
    }
  })().catch(() => undefined);
  return connection;
}

/** The bus is not there at start-up: an operator's setting, reported without a stack trace. */
export class BusUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BusUnreachableError";
  }
}
