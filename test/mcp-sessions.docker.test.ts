import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * Sessions of the MCP door per agent (docs/mcp.md#streamable-http): an agent at its limit (32) makes room among
 * its own sessions, so one agent opening sessions without end never locks another out.
 */

const TOKENS = { alice: "alice-token-0123456789abcdef", bob: "bob-token-0123456789abcdef" } as const;
const PER_AGENT = 32;
const INITIALIZE = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "sessions", version: "1" } },
});
const PING = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" });

function headers(token: string, session?: string): Record<string, string> {
  return {
    "content-type": "application/json",
    accept: "application/json, text/event-stream",
    authorization: `Bearer ${token}`,
    ...(session ? { "mcp-session-id": session, "mcp-protocol-version": "2025-06-18" } : {}),
  };
}

describe("MCP door: sessions per agent", () => {
  let engine: TestEngine;
  let url: string;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_MCP_PORT: "0", SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}` },
    });
    url = `http://127.0.0.1:${engine.app.mcpPort}/mcp`;
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  async function open(token: string): Promise<string> {
    const response = await fetch(url, { method: "POST", headers: headers(token), body: INITIALIZE });
    await response.text();
    expect(response.status).toBe(200);
    return response.headers.get("mcp-session-id") ?? "";
  }

  async function ping(token: string, session: string): Promise<number> {
    const response = await fetch(url, { method: "POST", headers: headers(token, session), body: PING });
    await response.text();
    return response.status;
  }

  it("an agent's session past its limit closes its own oldest, and another agent's sessions stay", async () => {
    const bobs = await open(TOKENS.bob);
    const alices: string[] = [];
    for (let i = 0; i < PER_AGENT + 1; i++) alices.push(await open(TOKENS.alice));
    // Alice's first session made room for her last; every other one of hers, and bob's, still answers.
    expect(await ping(TOKENS.alice, alices[0] ?? "")).toBe(404);
    for (const session of alices.slice(1)) expect(await ping(TOKENS.alice, session)).toBe(200);
    expect(await ping(TOKENS.bob, bobs)).toBe(200);
    expect(await ping(TOKENS.bob, await open(TOKENS.bob))).toBe(200);
  }, 120_000);
});
