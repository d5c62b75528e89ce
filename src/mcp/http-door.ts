import { randomUUID } from "node:crypto";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isJSONRPCRequest, type JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { errorMessage, UnauthenticatedError } from "../errors/index.js";
import type { Authenticator, Caller } from "../identity/index.js";
import type { HostAllowList } from "../observability/index.js";
import { catalogReader, CatalogWatch } from "./catalog-watch.js";
import type { EngineClient } from "./engine-client.js";
import { createMcpServer, type McpToolsMode, type SkillEngineMcpServer } from "./mcp-server.js";

export interface McpHttpDoorOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** The API, reached over the gRPC server's private socket. */
  readonly engine: EngineClient;
  /** The gRPC API's tokens: a request without a valid one is answered 401 before MCP sees it. */
  readonly authenticator: Authenticator;
  readonly tools: McpToolsMode;
  readonly pollMs: number;
  /** The gRPC port's certificate chain and key (PEM): HTTPS when given. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer };
  /** The largest request body, as the gRPC port's largest request (docs/files.md#message-sizes); past it: 413. */
  readonly maxRequestBytes: number;
  /** Host names the port answers to, against DNS rebinding (docs/security.md#dns-rebinding). */
  readonly allowedHosts: HostAllowList;
  readonly logger: Logger;
  /** Sessions open at once; a new one past it is answered 503. @default 1000 */
  readonly maxSessions?: number;
  /**
   * Sessions one agent may hold at once; its next one closes its own least recently used, so no
   * agent can take the others' room (docs/mcp.md#streamable-http). @default 32
   */
  readonly maxSessionsPerAgent?: number;
  /** A session with no request for this long is closed (its client starts a new one). @default 30 minutes */
  readonly sessionIdleMs?: number;
  readonly version?: string;
}

export interface RunningMcpHttpDoor {
  readonly port: number;
  /** Closes every session (their calls in flight are cancelled) and the port. Idempotent. */
  close(): Promise<void>;
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  readonly mcp: SkillEngineMcpServer;
  /** The agent that opened it: only that agent's requests may use it. */
  readonly agentId: string;
  /** The latest `authorization` header: the session's polls go with it. */
  authorization: string | undefined;
  lastSeen: number;
}

const PATH = "/mcp";
const DEFAULT_MAX_SESSIONS = 1_000;
const DEFAULT_MAX_SESSIONS_PER_AGENT = 32;
const DEFAULT_IDLE_MS = 30 * 60 * 1000;
const SESSION_HEADER = "mcp-session-id";

/**
 * MCP over Streamable HTTP at `/mcp` (docs/mcp.md#streamable-http): the service's tokens at the door (401
 * with `WWW-Authenticate: Bearer`), the gRPC request limit on bodies (413), one MCP server per session, each
 * bound to the agent that opened it, every call forwarded with the request's own `authorization`. A client
 * that goes away mid-request cancels what it asked for, as a gRPC client's cancel does.
 */
export async function startMcpHttpDoor(options: McpHttpDoorOptions): Promise<RunningMcpHttpDoor> {
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const maxPerAgent = options.maxSessionsPerAgent ?? DEFAULT_MAX_SESSIONS_PER_AGENT;
  const idleMs = options.sessionIdleMs ?? DEFAULT_IDLE_MS;
  const logger = options.logger;
  // One change poll per caller for all its sessions (docs/mcp.md#change-notifications).
  const catalogWatch = new CatalogWatch(catalogReader(options.engine), {
    pollMs: options.pollMs,
    onError: (error) => logger.debug({ err: error }, "mcp change poll failed"),
  });

  const closeSession = async (id: string): Promise<void> => {
    const session = sessions.get(id);
    if (!session) return;
    sessions.delete(id);
    await session.mcp.close().catch(() => undefined);
  };

  const newSession = async (caller: Caller, authorization: string | undefined): Promise<StreamableHTTPServerTransport> => {
    // Filled in below; the callbacks run only once the session exists.
    const made: { session?: Session } = {};
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        if (made.session) sessions.set(id, made.session);
        logger.info({ session: id, agent: caller.agentId }, "mcp session opened");
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const mcp = createMcpServer({
      engine: options.engine,
      tools: options.tools,
      pollMs: options.pollMs,
      catalogWatch,
      ...(options.version ? { version: options.version } : {}),
      authorization: (extra) => (extra?.authInfo ? `Bearer ${extra.authInfo.token}` : made.session?.authorization),
    });
    made.session = { transport, mcp, agentId: caller.agentId, authorization, lastSeen: Date.now() };
    await mcp.server.connect(transport);
    return transport;
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const url = new URL(request.url ?? "/", "http://mcp.invalid");
    if (url.pathname !== PATH) return plain(response, 404, `not found: the MCP endpoint is ${PATH}\n`);
    // DNS rebinding: a browser page of another name must not reach a local service (docs/security.md#dns-rebinding).
    if (!options.allowedHosts.allowsHost(request.headers.host)) {
      return plain(response, 421, `misdirected request: this port answers to ${options.allowedHosts.describe()}\n`);
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !options.allowedHosts.allowsOrigin(origin))
      return jsonRpcError(response, 403, -32000, "origin not allowed");

    const authorization = request.headers.authorization;
    let caller: Caller;
    try {
      caller = options.authenticator.authenticate(authorization);
    } catch (error) {
      if (!(error instanceof UnauthenticatedError)) throw error;
      response.setHeader(
        "www-authenticate",
        authorization === undefined ? 'Bearer realm="skill-engine"' : 'Bearer realm="skill-engine", error="invalid_token"',
      );
      return jsonRpcError(response, 401, -32001, error.message);
    }

    const sessionId = header(request, SESSION_HEADER);
    const session = sessionId === undefined ? undefined : sessions.get(sessionId);
    // Another agent's session answers as an unknown one: a session id is no credential.
    if (sessionId !== undefined && (!session || session.agentId !== caller.agentId)) {
      return jsonRpcError(response, 404, -32001, "session not found: start a new one with initialize");
    }
    let body: unknown;
    if (request.method === "POST") {
      const read = await readBody(request, options.maxRequestBytes);
      if (read.kind === "too-large") {
        response.setHeader("connection", "close");
        return jsonRpcError(response, 413, -32600, `request body larger than ${options.maxRequestBytes} bytes`);
      }
      try {
        body = JSON.parse(read.text);
      } catch (error) {
        return jsonRpcError(response, 400, -32700, `parse error: ${errorMessage(error)}`);
      }
    }
    // The transport reads the token from here and hands it to every handler of this request (extra.authInfo).
    if (authorization !== undefined) {
      const token = /^bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization)?.[1];
      if (token !== undefined) (request as IncomingMessage & { auth?: unknown }).auth = { token, clientId: caller.agentId, scopes: [] };
    }
    let transport: StreamableHTTPServerTransport;
    if (session) {
      session.authorization = authorization;
      session.lastSeen = Date.now();
      transport = session.transport;
    } else {
      if (request.method !== "POST") return jsonRpcError(response, 400, -32000, "no session: start one with an initialize POST");
      // An agent at its own limit makes room among its own sessions, never another agent's.
      const own = [...sessions].filter(([, s]) => s.agentId === caller.agentId);
      if (own.length >= maxPerAgent) {
        const [oldest] = own.reduce((a, b) => (a[1].lastSeen <= b[1].lastSeen ? a : b));
        await closeSession(oldest);
      }
      if (sessions.size >= maxSessions)
        return jsonRpcError(response, 503, -32000, `too many MCP sessions (${maxSessions}); try again later`);
      transport = await newSession(caller, authorization);
    }
    cancelOnDisconnect(response, transport, body);
    await transport.handleRequest(request, response, body);
  };

  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    handle(request, response).catch((error: unknown) => {
      logger.error({ err: error }, "mcp request failed");
      if (!response.headersSent) jsonRpcError(response, 500, -32603, "internal error: the service log has the details");
      else response.destroy();
    });
  };
  const server: Server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, listener)
    : createHttpServer(listener);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) if (now - session.lastSeen > idleMs) void closeSession(id);
    },
    Math.min(idleMs, 60_000),
  );
  sweep.unref();

  let closed: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      closed ??= (async () => {
        clearInterval(sweep);
        await Promise.all([...sessions.keys()].map(closeSession));
        catalogWatch.close();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })();
      return closed;
    },
  };
}

/**
 * A client that goes away before its answer cancels the requests of that POST: the same as its
 * `notifications/cancelled`, so their gRPC calls are cancelled and their runs stopped.
 */
function cancelOnDisconnect(response: ServerResponse, transport: StreamableHTTPServerTransport, body: unknown): void {
  const requests = (Array.isArray(body) ? body : [body]).filter((m): m is JSONRPCMessage & { id: string | number } =>
    isJSONRPCRequest(m as JSONRPCMessage),
  );
  if (requests.length === 0) return;
  response.once("close", () => {
    if (response.writableFinished) return;
    for (const message of requests) {
      transport.onmessage?.({
        jsonrpc: "2.0",
        method: "notifications/cancelled",
        params: { requestId: message.id, reason: "the client disconnected" },
      });
    }
  });
}

function readBody(request: IncomingMessage, limit: number): Promise<{ kind: "ok"; text: string } | { kind: "too-large" }> {
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: "too-large" });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      // Answered at once; the rest is not read (the connection closes after the answer).
      request.off("data", onData);
      chunks.length = 0;
      resolve({ kind: "too-large" });
    };
    request.on("data", onData);
    request.once("end", () => resolve({ kind: "ok", text: Buffer.concat(chunks).toString("utf8") }));
    request.once("error", reject);
  });
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function plain(response: ServerResponse, code: number, text: string): void {
  response.writeHead(code, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" }).end(text);
}

function jsonRpcError(response: ServerResponse, code: number, rpcCode: number, message: string): void {
  response
    .writeHead(code, { "content-type": "application/json", "cache-control": "no-store" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code: rpcCode, message }, id: null }));
}
