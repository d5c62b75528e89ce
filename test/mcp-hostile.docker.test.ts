import { request as httpRequest } from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CALL_OPTIONS, DOUBLER_CODE, DOUBLER_SCHEMA, httpClient } from "./support/mcp-clients.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * Hostile input on the MCP door over raw HTTP (docs/mcp.md#errors), past what test/mcp-http.docker.test.ts covers:
 * JSON that is no JSON-RPC, a body past the limit sent without a length, arguments nested past any sane depth,
 * bytes that are not UTF-8, the wrong media types. Each gets its answer, the session and the service carry on, and
 * the service logs no failure of its own.
 */

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" } as const;
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "hostile", version: "1" } },
};

interface Answer {
  readonly status: number;
  readonly headers: Headers;
  /** The JSON-RPC messages of the body, whether it came as JSON or as server-sent events. */
  readonly messages: Array<{ id?: unknown; result?: Record<string, unknown>; error?: { code: number; message: string } }>;
}

async function post(url: string, body: string | Uint8Array, headers: Record<string, string> = HEADERS): Promise<Answer> {
  const response = await fetch(url, { method: "POST", headers, body });
  const text = await response.text();
  const type = response.headers.get("content-type") ?? "";
  const messages = type.includes("text/event-stream")
    ? text
        .split("\n")
        .filter((line) => line.startsWith("data: ") && line.length > "data: ".length)
        .map((line) => JSON.parse(line.slice("data: ".length)) as Answer["messages"][number])
    : type.includes("application/json") && text !== ""
      ? [JSON.parse(text) as Answer["messages"][number]].flat()
      : [];
  return { status: response.status, headers: response.headers, messages };
}

describe("MCP over Streamable HTTP: hostile input", () => {
  let engine: TestEngine;
  const logs: Array<Record<string, unknown>> = [];
  let url: string;
  let session: Record<string, string>;
  let client: Client;

  beforeAll(async () => {
    engine = await startTestEngine({
      // The smallest request limit there is (4 MiB + 1 MiB of input files).
      env: { SKILL_ENGINE_MCP_PORT: "0", SKILL_ENGINE_INPUT_FILES_MB: "1" },
      logs: { write: (line) => logs.push(JSON.parse(line) as Record<string, unknown>) },
    });
    url = `http://127.0.0.1:${engine.app.mcpPort}/mcp`;
    await engine.client.register({
      name: "doubler",
      description: "Doubles an integer n.",
      parametersSchema: JSON.stringify(DOUBLER_SCHEMA),
      code: DOUBLER_CODE,
      testPayload: '{"n": 1}',
    });
    const opened = await post(url, JSON.stringify(INITIALIZE));
    expect(opened.status).toBe(200);
    session = { ...HEADERS, "mcp-session-id": opened.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": "2025-06-18" };
    await post(url, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), session);
    client = (await httpClient(engine.app.mcpPort ?? 0)).client;
  });
  afterAll(async () => {
    await client?.close();
    await engine?.dispose();
  });

  it("JSON that is not JSON-RPC and bytes that are not UTF-8 are 400s with a JSON-RPC error", async () => {
    for (const body of ['{"hello":"world"}', "null", "[1, 2]", '{"jsonrpc":"2.0","id":7}']) {
      const answer = await post(url, body, session);
      expect(answer.status, body).toBe(400);
      expect(answer.messages[0]?.error?.code, body).toBeLessThan(-32000);
    }
    const garbage = await post(url, new Uint8Array([0xff, 0xfe, 0x00, 0x7b, 0xc3]), session);
    expect(garbage.status).toBe(400);
    expect(garbage.messages[0]?.error?.code).toBe(-32700);
  });

  it("the wrong media types are refused by status", async () => {
    const ping = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });
    expect((await post(url, ping, { ...session, "content-type": "text/plain" })).status).toBe(415);
    expect((await post(url, ping, { ...session, accept: "text/html" })).status).toBe(406);
  });

  it("a body past the limit sent without a length is 413, and the connection is closed", async () => {
    const port = engine.app.mcpPort ?? 0;
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const request = httpRequest(
        { host: "127.0.0.1", port, path: "/mcp", method: "POST", headers: { ...session, "transfer-encoding": "chunked" } },
        (response) => {
          response.resume();
          resolve({ status: response.statusCode ?? 0, connection: response.headers.connection });
        },
      );
      // The server answers before the whole body is sent and may close mid-write: that is the point.
      request.on("error", (error: NodeJS.ErrnoException) =>
        error.code === "EPIPE" || error.code === "ECONNRESET" ? undefined : reject(error),
      );
      const chunk = Buffer.alloc(256 * 1024, 0x20);
      let sent = 0;
      const pump = (): void => {
        while (sent < 8 * 1024 * 1024) {
          sent += chunk.length;
          if (!request.write(chunk)) return void request.once("drain", pump);
        }
        request.end();
      };
      pump();
    });
    expect(answer.status).toBe(413);
    expect(answer.connection).toBe("close");
  });

  it("arguments nested past the door's depth limit are invalid params naming the limit, for every tool", async () => {
    const depth = 100_000;
    const nested = "[".repeat(depth) + "]".repeat(depth);
    const calls = [
      { name: "run_skill", arguments: `{"name":"doubler","arguments":{"n":${nested}}}` },
      { name: "register_skill", arguments: `{"name":"deep","description":"d","code":"print(1)","parameters_schema":{"a":${nested}}}` },
    ];
    for (const [index, call] of calls.entries()) {
      const id = 20 + index;
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${call.name}","arguments":${call.arguments}}}`;
      const answer = await post(url, body, session);
      expect(answer.status).toBe(200);
      const error = answer.messages.find((m) => m.id === id)?.error;
      expect(error?.code, call.name).toBe(-32602);
      expect(error?.message).toMatch(
        new RegExp(`Invalid arguments for tool ${call.name}: nest arrays and objects more than 256 levels deep`),
      );
    }
  });

  it("after all of it the session and the service still work, and the service logged no failure of its own", async () => {
    const ping = await post(url, JSON.stringify({ jsonrpc: "2.0", id: 10, method: "ping" }), session);
    expect(ping.messages.find((m) => m.id === 10)?.result).toEqual({});
    const run = await client.callTool({ name: "run_skill", arguments: { name: "doubler", arguments: { n: 4 } } }, undefined, CALL_OPTIONS);
    expect(run.structuredContent).toEqual({ doubled: 8 });
    // pino: 50 is error, 60 fatal.
    expect(logs.filter((entry) => Number(entry.level) >= 50).map((entry) => entry.msg)).toEqual([]);
  });
});
