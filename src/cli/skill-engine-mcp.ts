#!/usr/bin/env node
/**
 * skill-engine-mcp: the skill engine as an MCP server on stdin/stdout, for MCP clients that launch their
 * servers (docs/mcp.md#stdio). It forwards every tool call, resource read and poll to a running service over
 * gRPC, with the token and TLS settings skillctl reads. stdout carries MCP only; logs go to stderr.
 */
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { errorMessage } from "../errors/index.js";
import { createMcpServer, EngineClient, type McpToolsMode } from "../mcp/index.js";
import { channelCredentials, type GlobalOptions, resolveToken, type TokenSource, transportWarnings, UsageError } from "./skillctl/index.js";

const DEFAULT_ADDRESS = "127.0.0.1:50051";
const USAGE = `usage: skill-engine-mcp [--address HOST:PORT] [--token-file PATH] [--tls | --tls-ca PATH] [--tools meta|skills|both]

Speaks MCP on stdin/stdout and forwards to a running skill engine over gRPC (docs/mcp.md#stdio).
  --address HOST:PORT  the service (default $SKILL_ENGINE_ADDRESS or ${DEFAULT_ADDRESS})
  --token-file PATH    read the bearer token from PATH (default $SKILL_ENGINE_TOKEN_FILE); without it, $SKILL_ENGINE_TOKEN
  --tls                TLS, verifying the server against the system's root certificates
  --tls-ca PATH        TLS, verifying the server against the CA certificate(s) in PATH (default $SKILL_ENGINE_TLS_CA)
  --tools MODE         meta (default, $SKILL_ENGINE_MCP_TOOLS), skills (a tool per skill) or both
`;

function log(line: string): void {
  process.stderr.write(`skill-engine-mcp: ${line}\n`);
}

function settings(argv: readonly string[], env: NodeJS.ProcessEnv): (GlobalOptions & { tools: McpToolsMode; pollMs: number }) | "help" {
  let values;
  try {
    values = parseArgs({
      args: [...argv],
      options: {
        address: { type: "string" },
        "token-file": { type: "string" },
        tls: { type: "boolean" },
        "tls-ca": { type: "string" },
        tools: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }).values;
  } catch (error) {
    throw new UsageError(errorMessage(error));
  }
  if (values.help) return "help";
  const tools = values.tools ?? (env.SKILL_ENGINE_MCP_TOOLS || "meta");
  if (tools !== "meta" && tools !== "skills" && tools !== "both")
    throw new UsageError(`--tools must be meta, skills or both, got '${tools}'`);
  const pollSeconds = Number(env.SKILL_ENGINE_MCP_POLL_SECONDS || 5);
  if (!Number.isFinite(pollSeconds) || pollSeconds < 0) throw new UsageError("SKILL_ENGINE_MCP_POLL_SECONDS must be a number of seconds");
  const tokenFile = values["token-file"] ?? (env.SKILL_ENGINE_TOKEN_FILE || undefined);
  const envToken = env.SKILL_ENGINE_TOKEN?.trim();
  const token: TokenSource =
    tokenFile !== undefined
      ? { kind: "file", path: tokenFile }
      : envToken
        ? { kind: "env", token: envToken, variable: "SKILL_ENGINE_TOKEN" }
        : { kind: "none" };
  const ca = values["tls-ca"] ?? (env.SKILL_ENGINE_TLS_CA || undefined);
  return {
    address: values.address ?? (env.SKILL_ENGINE_ADDRESS || DEFAULT_ADDRESS),
    json: false,
    timeoutMs: 0,
    token,
    tls: ca !== undefined ? { kind: "ca-file", path: ca } : values.tls ? { kind: "system-roots" } : { kind: "insecure" },
    tools,
    pollMs: Math.round(pollSeconds * 1000),
  };
}

async function main(): Promise<number | undefined> {
  let options;
  let token;
  let channel;
  try {
    options = settings(process.argv.slice(2), process.env);
    if (options === "help") {
      process.stderr.write(USAGE);
      return 0;
    }
    token = await resolveToken(options.token);
    channel = await channelCredentials(options.tls);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(error.message);
    process.stderr.write(USAGE);
    return 2;
  }
  for (const warning of [...token.warnings, ...transportWarnings(options, token.token)]) log(warning);
  const authorization = token.token === undefined ? undefined : `Bearer ${token.token}`;
  const engine = new EngineClient({ address: options.address, credentials: channel });
  const mcp = createMcpServer({
    engine,
    tools: options.tools,
    pollMs: options.pollMs,
    authorization: () => authorization,
    onPollError: (error) => log(`looking for skill changes failed: ${errorMessage(error)}`),
  });
  const transport = new StdioServerTransport();
  transport.onerror = (error) => log(`bad message on stdin: ${error.message}`);
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    // Closing the server aborts the requests in flight: their gRPC calls are cancelled, and their runs stopped.
    void mcp
      .close()
      .catch(() => undefined)
      .finally(() => {
        engine.close();
        // Lets the cancels reach the service before the process goes.
        setTimeout(() => process.exit(0), 200).unref();
      });
  };
  process.stdin.once("end", stop);
  process.stdin.once("close", stop);
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  await mcp.server.connect(transport);
  log(`serving MCP on stdio for ${options.address} (${options.tools} tools; ${token.origin})`);
  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (error: unknown) => {
    log(`internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exitCode = 3;
  },
);
