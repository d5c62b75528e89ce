import { mkdtemp, rm } from "node:fs/promises";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { type AddressInfo, connect, createConnection, createServer, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EgressConnection, type HostPattern, openRunGateway, parseHostMap, parseHostPattern, type RunGateway } from "./index.js";

const pattern = (text: string): HostPattern => {
  const parsed = parseHostPattern(text);
  if (typeof parsed === "string") throw new Error(parsed);
  return parsed;
};

/** Sends `request` to the gateway's socket and reads everything until the gateway closes. */
function exchange(socketPath: string, request: string, after?: (socket: ReturnType<typeof connect>) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk);
      if (after && Buffer.concat(chunks).toString().includes("200 Connection Established")) {
        const run = after;
        after = undefined;
        run(socket);
      }
    });
    socket.on("error", reject);
    socket.on("close", () => resolve(Buffer.concat(chunks).toString("latin1")));
    socket.write(request);
  });
}

describe("the egress gateway", () => {
  let dir: string;
  let http: HttpServer;
  let httpPort: number;
  let echo: Server;
  let echoPort: number;
  let big: HttpServer;
  let bigPort: number;
  const seen: string[] = [];

  beforeAll(async () => {
    http = createHttpServer((request, response) => {
      seen.push(`${request.method} ${request.url} host=${request.headers.host} key=${request.headers["x-key"] ?? ""}`);
      response.end(`hello from ${request.url}`);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    httpPort = (http.address() as AddressInfo).port;
    echo = createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, "127.0.0.1", resolve));
    echoPort = (echo.address() as AddressInfo).port;
    big = createHttpServer((_request, response) => response.end(Buffer.alloc(2 * 1024 * 1024, 1)));
    await new Promise<void>((resolve) => big.listen(0, "127.0.0.1", resolve));
    bigPort = (big.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await new Promise((resolve) => http.close(resolve));
    await new Promise((resolve) => echo.close(resolve));
    await new Promise((resolve) => big.close(resolve));
  });

  let gateway: RunGateway | undefined;
  let connections: EgressConnection[];
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "egress-"));
    connections = [];
    seen.length = 0;
  });
  afterEach(async () => {
    await gateway?.close();
    gateway = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  const open = async (
    allowed: string[],
    map: string,
    extra: {
      resolve?: (host: string) => Promise<readonly string[]>;
      connectTo?: (address: string, port: number) => ReturnType<typeof createConnection>;
      maxBytes?: number;
      maxConnections?: number;
    } = {},
  ): Promise<string> => {
    const socketPath = path.join(dir, "egress.sock");
    gateway = await openRunGateway({
      socketPath,
      runId: "run-1",
      skill: "weather",
      allowed: allowed.map(pattern),
      hostMap: parseHostMap(map),
      limits: { maxConnections: extra.maxConnections ?? 8, maxBytes: extra.maxBytes ?? 1024 * 1024, connectTimeoutMs: 10_000 },
      logger: pino({ level: "silent" }),
      onConnection: (connection) => connections.push(connection),
      ...(extra.resolve ? { resolve: extra.resolve } : {}),
      ...(extra.connectTo ? { connectTo: extra.connectTo } : {}),
    });
    return socketPath;
  };

  it("forwards a plain HTTP request to a declared host the operator mapped, in origin form, with its headers", async () => {
    const socket = await open(["api.example.com"], `api.example.com=127.0.0.1:${httpPort}`);
    const answer = await exchange(
      socket,
      "GET http://api.example.com/forecast?city=oslo HTTP/1.1\r\nHost: api.example.com\r\nX-Key: k123\r\nProxy-Connection: keep-alive\r\n\r\n",
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(answer).toContain("hello from /forecast?city=oslo");
    expect(seen).toEqual(["GET /forecast?city=oslo host=api.example.com key=k123"]);
    expect(connections).toMatchObject([{ host: "api.example.com", port: 80, verdict: "allowed" }]);
    expect(gateway?.refusals()).toEqual([]);
  });

  it("tunnels CONNECT to a declared host:port and moves bytes both ways", async () => {
    const socket = await open(["*.example.com:8443"], `db.example.com=127.0.0.1:${echoPort}`);
    const answer = await exchange(socket, "CONNECT db.example.com:8443 HTTP/1.1\r\nHost: db.example.com:8443\r\n\r\n", (tunnel) => {
      // End only once the echo is back: on a busy machine it may take a while.
      let echoed = "";
      tunnel.on("data", (chunk: Buffer) => {
        echoed += chunk.toString("latin1");
        if (echoed.includes("ping through the tunnel")) tunnel.end();
      });
      tunnel.write("ping through the tunnel");
    });
    expect(answer).toBe("HTTP/1.1 200 Connection Established\r\n\r\nping through the tunnel");
  });

  it("refuses an undeclared host even when the map knows it, and nothing reaches the server", async () => {
    const socket = await open(["api.example.com"], `api.example.com=127.0.0.1:${httpPort},other.example.com=127.0.0.1:${httpPort}`);
    const answer = await exchange(socket, "GET http://other.example.com/ HTTP/1.1\r\nHost: other.example.com\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 403 Forbidden/);
    expect(answer).toContain("egress to other.example.com:80 refused: not in the skill's network_allow");
    expect(seen).toEqual([]);
    expect(gateway?.refusals()).toEqual(["network: other.example.com:80 refused: not in the skill's network_allow"]);
  });

  it("refuses a declared port it was not given, and an IP literal the skill did not declare", async () => {
    const socket = await open(["api.example.com"], `api.example.com=127.0.0.1:${httpPort}`);
    expect(await exchange(socket, "CONNECT api.example.com:22 HTTP/1.1\r\n\r\n")).toMatch(
      /403 Forbidden[\s\S]*not in the skill's network_allow/,
    );
    expect(await exchange(socket, `GET http://127.0.0.1:${httpPort}/ HTTP/1.1\r\n\r\n`)).toMatch(
      /403 Forbidden[\s\S]*an IP address the skill did not declare/,
    );
    expect(seen).toEqual([]);
  });

  it("refuses a declared name that resolves to a loopback, private or metadata address without the map", async () => {
    for (const [answer, range] of [
      ["127.0.0.1", "loopback"],
      ["10.0.0.7", "private"],
      ["169.254.169.254", "link-local (cloud metadata)"],
      ["::ffff:192.168.1.1", "private"],
    ] as const) {
      const socket = await open(["api.example.com"], "", { resolve: async () => ["93.184.216.34", answer] });
      expect(await exchange(socket, "CONNECT api.example.com:443 HTTP/1.1\r\n\r\n")).toContain(
        `egress to api.example.com:443 refused: resolves to ${answer}, a ${range} address`,
      );
      await gateway?.close();
      gateway = undefined;
    }
  });

  it("connects to the very address it checked: an answer that changes between check and connect changes nothing", async () => {
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    let lookups = 0;
    const dialled: string[] = [];
    const socket = await open(["api.example.com"], "", {
      resolve: async () => answers[Math.min(lookups++, answers.length - 1)] as string[],
      // No traffic leaves this machine: the dial is recorded and sent to a local echo server instead.
      connectTo: (address, port) => {
        dialled.push(`${address}:${port}`);
        return createConnection({ host: "127.0.0.1", port: echoPort });
      },
    });
    await exchange(socket, "CONNECT api.example.com:443 HTTP/1.1\r\n\r\n", (tunnel) => tunnel.end());
    expect(lookups).toBe(1);
    expect(dialled).toEqual(["93.184.216.34:443"]);
  });

  it("cuts a run off past its byte limit and past its connection limit, saying which", async () => {
    const socket = await open(["files.example.com"], `files.example.com=127.0.0.1:${bigPort}`, { maxBytes: 256 * 1024, maxConnections: 1 });
    const answer = await exchange(socket, "GET http://files.example.com/big HTTP/1.1\r\nHost: files.example.com\r\n\r\n");
    expect(answer.length).toBeLessThan(2 * 1024 * 1024);
    expect(gateway?.refusals()).toEqual([
      "network: files.example.com:80 cut off: the run moved more than 262144 bytes (SKILL_ENGINE_EGRESS_MAX_BYTES)",
    ]);
    expect(await exchange(socket, "GET http://files.example.com/again HTTP/1.1\r\n\r\n")).toContain(
      "more than 1 connections in one run (SKILL_ENGINE_EGRESS_MAX_CONNECTIONS)",
    );
  });

  it("answers 400 to what is not a proxy request", async () => {
    const socket = await open(["api.example.com"], "");
    expect(await exchange(socket, "GET /relative HTTP/1.1\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 Bad Request/);
    expect(await exchange(socket, "hello\r\n\r\n")).toMatch(/^HTTP\/1\.1 400 Bad Request[\s\S]*not an HTTP proxy request/);
  });
});

describe("egress declarations", () => {
  it("parses hosts, ports, wildcards and literals, and says what is wrong with the rest", () => {
    expect(parseHostPattern("API.Example.com.")).toMatchObject({ host: "api.example.com", wildcard: false, port: undefined });
    expect(parseHostPattern("*.example.com:8443")).toMatchObject({ host: "example.com", wildcard: true, port: 8443 });
    expect(parseHostPattern("[2001:db8::1]:443")).toMatchObject({ host: "2001:db8::1", literal: true, port: 443 });
    expect(parseHostPattern("https://api.example.com/x")).toBe("must be a host, host:port or *.domain, not a URL");
    expect(parseHostPattern("*.com")).toBe("is a wildcard over a whole top-level domain; name a domain (*.example.com)");
    expect(parseHostPattern("api.*.com")).toBe("may use * only as the whole first label (*.example.com)");
    expect(parseHostPattern("host:99999")).toBe("has a port outside 1-65535");
    expect(parseHostPattern("bad_name.com")).toBe("is not a valid host name");
  });

  it("reads the operator's host map and refuses a malformed entry", () => {
    expect(parseHostMap("api.example.com=127.0.0.1:8080, db.example.com=[::1]:5432")).toEqual(
      new Map([
        ["api.example.com", { address: "127.0.0.1", port: 8080 }],
        ["db.example.com", { address: "::1", port: 5432 }],
      ]),
    );
    expect(() => parseHostMap("api.example.com=localhost")).toThrow(/must map to an IP address/);
  });
});
