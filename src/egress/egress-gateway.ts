import { lookup } from "node:dns/promises";
import { randomBytes } from "node:crypto";
import { chmod, rename, rm } from "node:fs/promises";
import { createConnection, createServer, isIP, type Server, type Socket } from "node:net";
import path from "node:path";
import type { Logger } from "pino";
import { refusedRange } from "./address-ranges.js";
import { allowingPattern, type HostPattern, type MappedAddress } from "./egress-policy.js";

/** Per-run limits of the way out (docs/security.md#egress). */
export interface EgressLimits {
  /** Connections a run may open in all. */
  readonly maxConnections: number;
  /** Bytes a run may move, both directions and all connections together. */
  readonly maxBytes: number;
  /** How long a connection to a host may take to open. */
  readonly connectTimeoutMs: number;
}

/** One connection's story, for the log line and the metrics. */
export interface EgressConnection {
  readonly host: string;
  readonly port: number;
  readonly verdict: "allowed" | "refused";
  /** Why it was refused, one sentence; empty when allowed. */
  readonly reason: string;
  readonly bytesOut: number;
  readonly bytesIn: number;
}

export interface RunGatewayOptions {
  /** The socket in the run's own directory that the in-container forwarder connects to. */
  readonly socketPath: string;
  readonly runId: string;
  readonly skill: string;
  /** The skill's declarations (already checked against the operator's policy). */
  readonly allowed: readonly HostPattern[];
  /** The operator's names for addresses: the only way to a loopback or private address. */
  readonly hostMap: ReadonlyMap<string, MappedAddress>;
  readonly limits: EgressLimits;
  /** The run's logger: its lines carry the run's id and skill already. */
  readonly logger: Logger;
  /** Every connection once it ends (metrics). */
  readonly onConnection?: (connection: EgressConnection) => void;
  /** Name resolution; every address it answers is checked. @default dns.lookup, all addresses */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  /** Opens the connection to the checked address. @default net.createConnection */
  readonly connectTo?: (address: string, port: number) => Socket;
}

/** A run's gateway, open while the run is. */
export interface RunGateway {
  /** What was refused so far, one line each (the run's warnings). */
  refusals(): readonly string[];
  /** Stops listening, cuts every connection, removes the socket. */
  close(): Promise<void>;
}

/** Largest request head the gateway reads before deciding (a proxy request is a line and a few headers). */
const MAX_HEAD_BYTES = 16 * 1024;
/** Longest path a unix socket may be bound at (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH_BYTES = 107;
/** How long a client may take to send its request head. */
const HEAD_TIMEOUT_MS = 10_000;

const defaultResolve = async (host: string): Promise<readonly string[]> =>
  (await lookup(host, { all: true, verbatim: true })).map((answer) => answer.address);

/**
 * The engine's side of a run's way out (docs/security.md#egress): an HTTP proxy on a unix socket in the
 * run's directory. It takes `CONNECT host:port` (HTTPS and any TLS) and absolute-form plain HTTP
 * requests, lets through only what the skill declared, resolves names itself, refuses any answer in
 * a refused range (loopback, private, link-local, metadata, …) and connects to the very address it
 * checked, so a DNS answer that changes between check and connect changes nothing. IP literals pass
 * only when declared as such. Connections, bytes and connect time are bounded per run.
 */
export async function openRunGateway(options: RunGatewayOptions): Promise<RunGateway> {
  const refusals: string[] = [];
  const sockets = new Set<Socket>();
  const resolve = options.resolve ?? defaultResolve;
  let connections = 0;
  let bytes = 0;

  const refuse = (
    client: Socket,
    status: string,
    target: string,
    reason: string,
    report: Omit<EgressConnection, "bytesIn" | "bytesOut">,
  ): void => {
    refusals.push(`network: ${target} refused: ${reason}`);
    options.logger.warn({ host: report.host, port: report.port, verdict: "refused", reason }, "egress refused");
    options.onConnection?.({ ...report, bytesIn: 0, bytesOut: 0 });
    const body = `egress to ${target} refused: ${reason}\n`;
    client.end(
      `HTTP/1.1 ${status}\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  };

  const handle = async (client: Socket, head: Buffer, rest: Buffer): Promise<void> => {
    const request = parseProxyRequest(head);
    if (typeof request === "string") {
      refuse(client, "400 Bad Request", "(unreadable request)", request, { host: "", port: 0, verdict: "refused", reason: request });
      return;
    }
    const { host, port } = request;
    const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
    const denied = (reason: string) => refuse(client, "403 Forbidden", target, reason, { host, port, verdict: "refused", reason });
    const pattern = allowingPattern(options.allowed, host, port);
    if (!pattern || (isIP(host) !== 0 && !pattern.literal)) {
      denied(
        isIP(host) !== 0
          ? "an IP address the skill did not declare (declare it as written, or use a host name)"
          : "not in the skill's network_allow",
      );
      return;
    }
    connections += 1;
    if (connections > options.limits.maxConnections) {
      denied(`more than ${options.limits.maxConnections} connections in one run (SKILL_ENGINE_EGRESS_MAX_CONNECTIONS)`);
      return;
    }
    let address: string;
    let targetPort = port;
    const mapped = options.hostMap.get(host.toLowerCase().replace(/\.$/, ""));
    if (mapped) {
      address = mapped.address;
      targetPort = mapped.port ?? port;
    } else {
      let answers: readonly string[];
      try {
        answers = isIP(host) !== 0 ? [host] : await resolve(host);
      } catch {
        denied("the name does not resolve");
        return;
      }
      const bad = answers.map((answer) => [answer, refusedRange(answer)] as const).find(([, range]) => range !== undefined);
      if (bad || answers.length === 0) {
        denied(bad ? `resolves to ${bad[0]}, a ${bad[1]} address` : "the name has no address");
        return;
      }
      address = answers[0] as string;
    }
    const upstream = (options.connectTo ?? ((to: string, at: number) => createConnection({ host: to, port: at })))(address, targetPort);
    sockets.add(upstream);
    const connectTimer = setTimeout(() => upstream.destroy(new Error("connect timeout")), options.limits.connectTimeoutMs);
    let bytesOut = 0;
    let bytesIn = 0;
    let overLimit = false;
    const count = (direction: "out" | "in", chunk: Buffer): void => {
      if (direction === "out") bytesOut += chunk.length;
      else bytesIn += chunk.length;
      bytes += chunk.length;
      if (bytes > options.limits.maxBytes && !overLimit) {
        overLimit = true;
        refusals.push(
          `network: ${target} cut off: the run moved more than ${options.limits.maxBytes} bytes (SKILL_ENGINE_EGRESS_MAX_BYTES)`,
        );
        client.destroy();
        upstream.destroy();
      }
    };
    upstream.once("connect", () => {
      clearTimeout(connectTimer);
      if (request.method === "CONNECT") client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      else {
        const forwarded = Buffer.concat([request.originHead, rest]);
        count("out", forwarded);
        upstream.write(forwarded);
      }
      if (request.method === "CONNECT" && rest.length > 0) {
        count("out", rest);
        upstream.write(rest);
      }
      client.on("data", (chunk: Buffer) => {
        count("out", chunk);
        if (!overLimit) upstream.write(chunk);
      });
      upstream.on("data", (chunk: Buffer) => {
        count("in", chunk);
        if (!overLimit) client.write(chunk);
      });
      client.resume();
    });
    upstream.once("error", () => {
      clearTimeout(connectTimer);
      if (bytesIn === 0 && bytesOut === 0 && !client.destroyed && request.method === "CONNECT") {
        client.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
      } else client.destroy();
    });
    upstream.once("close", () => {
      sockets.delete(upstream);
      client.end();
      const verdict = overLimit ? "refused" : "allowed";
      const reason = overLimit ? "byte limit" : "";
      options.logger.info({ host, port, bytesOut, bytesIn, verdict }, "egress connection");
      options.onConnection?.({ host, port, verdict, reason, bytesOut, bytesIn });
    });
    client.once("close", () => upstream.end());
  };

  const server: Server = createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const timer = setTimeout(() => client.destroy(), HEAD_TIMEOUT_MS);
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0 && head.length <= MAX_HEAD_BYTES) return;
      client.off("data", onData);
      client.pause();
      clearTimeout(timer);
      if (end < 0) {
        client.destroy();
        return;
      }
      void handle(client, head.subarray(0, end + 4), head.subarray(end + 4)).catch((error: unknown) => {
        options.logger.error({ err: error, runId: options.runId }, "egress gateway failed a connection");
        client.destroy();
      });
    };
    client.on("data", onData);
  });
  // A unix socket's path may be at most 107 bytes, and a run directory's is often longer: the socket
  // is bound under a short name one level up (the same file system), then renamed into place. The
  // listening socket follows its inode, so clients connect through the new name.
  const bindPath = path.join(path.dirname(path.dirname(options.socketPath)), `.egress-${randomBytes(6).toString("hex")}.sock`);
  if (Buffer.byteLength(bindPath) > MAX_SOCKET_PATH_BYTES) {
    throw new Error(
      `the sandbox directory's path is too long for a unix socket (${Buffer.byteLength(bindPath)} bytes; at most ${MAX_SOCKET_PATH_BYTES}): choose a shorter SKILL_ENGINE_SANDBOX_DIR`,
    );
  }
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(bindPath, () => resolveListen());
  });
  try {
    // The sandbox user (another uid) connects; only the run's own container sees its directory.
    await chmod(bindPath, 0o666);
    await rename(bindPath, options.socketPath);
  } catch (error) {
    server.close();
    await rm(bindPath, { force: true });
    throw error;
  }
  return {
    refusals: () => [...refusals],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
      await rm(options.socketPath, { force: true });
    },
  };
}

/** A proxy request as the gateway takes it. */
interface ProxyRequest {
  readonly method: string;
  readonly host: string;
  readonly port: number;
  /** For plain HTTP: the head rewritten to origin form, hop-by-hop proxy headers dropped, one request per connection. */
  readonly originHead: Buffer;
}

/** Parses `CONNECT host:port` or an absolute-form `GET http://host[:port]/path`; otherwise why not. */
export function parseProxyRequest(head: Buffer): ProxyRequest | string {
  const text = head.toString("latin1");
  const lines = text.split("\r\n");
  const match = /^([A-Z]{3,10}) (\S+) HTTP\/1\.[01]$/.exec(lines[0] ?? "");
  if (!match) return "not an HTTP proxy request";
  const method = match[1] as string;
  const target = match[2] as string;
  if (method === "CONNECT") {
    const authority = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
    const port = Number(authority?.[3]);
    if (!authority || port < 1 || port > 65535) return "CONNECT needs host:port";
    return { method, host: (authority[1] ?? authority[2] ?? "").toLowerCase(), port, originHead: Buffer.alloc(0) };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return "a plain HTTP request through the proxy must use an absolute URL";
  }
  if (url.protocol !== "http:") return "only http:// URLs go as plain requests; https goes through CONNECT";
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const port = url.port === "" ? 80 : Number(url.port);
  const headers = lines
    .slice(1)
    .filter((line) => line !== "" && !/^(proxy-connection|proxy-authorization|connection|keep-alive):/i.test(line));
  const originHead = Buffer.from(
    `${method} ${url.pathname}${url.search} HTTP/1.1\r\n${[...headers, "Connection: close"].join("\r\n")}\r\n\r\n`,
    "latin1",
  );
  return { method, host, port, originHead };
}
