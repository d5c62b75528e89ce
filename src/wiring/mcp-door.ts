import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { credentials } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import type { Authenticator } from "../identity/index.js";
import { EngineClient, startMcpHttpDoor } from "../mcp/index.js";
import { HostAllowList } from "../observability/index.js";

/** Longest unix socket path that binds everywhere (sun_path is 108 bytes on Linux, 104 on macOS). */
const MAX_SOCKET_PATH = 100;

/** Where the gRPC server's private socket for the MCP door goes, and how to remove what was made for it. */
export interface PrivateSocket {
  readonly path: string;
  remove(): Promise<void>;
}

/**
 * The MCP door's way to the API (docs/mcp.md#one-implementation): a unix socket in SKILL_ENGINE_HOME (0700),
 * or, when that path is too long for a socket, in a private temporary directory. Undefined when the door is off.
 */
export async function privateSocketFor(config: SkillEngineConfig): Promise<PrivateSocket | undefined> {
  if (config.mcp === undefined) return undefined;
  const inHome = path.join(config.home, "mcp-grpc.sock");
  if (inHome.length <= MAX_SOCKET_PATH) return { path: inHome, remove: () => rm(inHome, { force: true }) };
  const dir = await mkdtemp(path.join(os.tmpdir(), "skill-engine-mcp-")); // 0700
  return { path: path.join(dir, "grpc.sock"), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The Streamable HTTP door at /mcp, when SKILL_ENGINE_MCP_PORT is set (docs/mcp.md#streamable-http). */
export async function startMcpDoor(
  config: SkillEngineConfig,
  logger: Logger,
  parts: { readonly socket: PrivateSocket; readonly authenticator: Authenticator; readonly maxRequestBytes: number },
): Promise<{ port: number; close(): Promise<void> } | undefined> {
  const settings = config.mcp;
  if (settings === undefined) return undefined;
  const tls = config.tls ? { cert: await readFile(config.tls.certFile), key: await readFile(config.tls.keyFile) } : undefined;
  const engine = new EngineClient({ address: `unix:${parts.socket.path}`, credentials: credentials.createInsecure() });
  try {
    const door = await startMcpHttpDoor({
      host: settings.host,
      port: settings.port,
      engine,
      authenticator: parts.authenticator,
      tools: settings.tools,
      pollMs: settings.pollMs,
      ...(tls ? { tls } : {}),
      maxRequestBytes: parts.maxRequestBytes,
      allowedHosts: new HostAllowList(config.httpAllowedHosts),
      logger: logger.child({ component: "mcp" }),
    });
    logger.info(
      { host: settings.host, port: door.port, tools: settings.tools },
      `MCP door listening on ${tls ? "https" : "http"}://${settings.host}:${door.port}/mcp`,
    );
    return {
      port: door.port,
      async close() {
        await door.close();
        engine.close();
      },
    };
  } catch (error) {
    engine.close();
    throw error;
  }
}
