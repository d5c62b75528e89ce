import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
/** The stdio bin, run from source through tsx as the tests spawn skillctl. */
export const MCP_BIN = path.join(ROOT, "src", "cli", "skill-engine-mcp.ts");

/** Tool calls and runs wait for a sandbox on a loaded machine: far past the SDK's 60 s default. */
export const CALL_OPTIONS = { timeout: 180_000 } as const;

/** The SDK's own client over Streamable HTTP to `http://127.0.0.1:<port>/mcp`, with a bearer token when given. */
export async function httpClient(port: number, token?: string): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "skill-engine-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
}

/** The SDK's own client over stdio, launching the bin against the gRPC port; `env` is all it is given of ours. */
export async function stdioClient(
  grpcPort: number,
  env: Record<string, string> = {},
  stderr?: (text: string) => void,
): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", MCP_BIN],
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root", SKILL_ENGINE_ADDRESS: `127.0.0.1:${grpcPort}`, ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "skill-engine-test", version: "1.0.0" });
  const started = client.connect(transport);
  transport.stderr?.on("data", (chunk: Buffer) => stderr?.(chunk.toString("utf8")));
  await started;
  return { client, transport };
}

/** The text blocks of a tool result, joined. */
export function textOf(result: unknown): string {
  return ((result as CallToolResult).content ?? [])
    .filter((c): c is { type: "text"; text: string } => c.type === "text")
    .map((c) => c.text)
    .join("\n");
}

/** The invocation id a run_skill result names. */
export function invocationIdOf(result: unknown): string {
  const id = ((result as CallToolResult)._meta as Record<string, unknown> | undefined)?.["skill-engine/invocation_id"];
  if (typeof id !== "string" || id === "") throw new Error(`no invocation id in ${JSON.stringify(result)}`);
  return id;
}

export const DOUBLER_CODE = `import json
import sys

payload = json.loads(sys.argv[1])
print(json.dumps({"doubled": payload["n"] * 2}))
`;

export const DOUBLER_SCHEMA = { type: "object", properties: { n: { type: "integer" } }, required: ["n"] };

/** A skill whose test passes (n = 1) and whose run fails on n = 0 with a ValueError. */
export const PICKY_CODE = `import json
import sys

payload = json.loads(sys.argv[1])
if payload["n"] == 0:
    raise ValueError("n must not be zero")
print(json.dumps({"inverse": 1 / payload["n"]}))
`;

/** Sleeps past any test's patience unless cancelled: for cancellation tests. */
export const SLEEPER_CODE = `import json
import sys
import time

payload = json.loads(sys.argv[1])
time.sleep(payload.get("seconds", 0))
print(json.dumps({"slept": payload.get("seconds", 0)}))
`;
