import { readFile } from "node:fs/promises";
import { connect, credsAuthenticator, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import type { NatsSettings } from "../../config/index.js";
import { errorMessage } from "../../errors/index.js";

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
    const reason = errorMessage(error);
    throw new BusUnreachableError(`cannot connect to the NATS bus at ${settings.servers.join(", ")}: ${reason}; ${hintFor(reason)}`, {
      cause: error,
    });
  });
  void (async () => {
    for await (const event of connection.status()) {
      if (event.type === "disconnect" || event.type === "reconnect")
        logger.warn({ event: event.type, server: event.server }, `message bus ${event.type}`);
    }
  })().catch(() => undefined);
  return connection;
}

/** What an operator can do about a refused first connection: the bus answered but refused, or it is not there. */
function hintFor(reason: string): string {
  if (/authori[sz]ation|authentication|permission/i.test(reason)) {
    return "the bus refused the credentials: check SKILL_ENGINE_NATS_TOKEN, SKILL_ENGINE_NATS_USER/_PASSWORD or SKILL_ENGINE_NATS_CREDS against the server's authorization";
  }
  if (/tls|certificate|handshake/i.test(reason)) return "check SKILL_ENGINE_NATS_TLS_* against the server's tls block";
  return "start nats-server or set SKILL_ENGINE_NATS_URL";
}

/** The bus is not there at start-up: an operator's setting, reported without a stack trace. */
export class BusUnreachableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "BusUnreachableError";
  }
}
