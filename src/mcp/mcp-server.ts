import { status } from "@grpc/grpc-js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { jsonDepth } from "../json/index.js";
import { type CallScope, type EngineClient, isServiceError, wholeCatalog } from "./engine-client.js";
import { InvocationMemory, invokeSkill, META_TOOLS, type MetaTool, runResult, type ToolContext } from "./meta-tools.js";
import { registerPrompts } from "./prompts.js";
import { listSkillResources, readSkillResource, resourceError, SKILL_RESOURCE_TEMPLATE } from "./skill-resources.js";
import { resourcesFingerprint, skillToolsPage, toolsFingerprint } from "./skill-tools.js";
import { toolResultOfRpcError } from "./tool-results.js";
import { describeIssues, jsonSchemaOf } from "./tool-schemas.js";

/** Which tools the server lists (SKILL_ENGINE_MCP_TOOLS; docs/mcp.md#tools). */
export type McpToolsMode = "meta" | "skills" | "both";

export type RequestExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface McpServerOptions {
  /** The API every tool, resource and poll goes through. */
  readonly engine: EngineClient;
  /** @default "meta" */
  readonly tools?: McpToolsMode;
  /** How often the session looks for changes of the caller's skills (list_changed); 0: never. @default 5000 */
  readonly pollMs?: number;
  /**
   * The `authorization` metadata of a request's gRPC calls: the HTTP request's own bearer token, or the stdio
   * bin's token; called without a request for the session's polls (its latest credentials).
   */
  authorization(extra?: RequestExtra): string | undefined;
  /** Where failed polls are told (they are retried at the next interval). */
  readonly onPollError?: (error: unknown) => void;
  /** The server's version in `initialize`. @default "0.0.0" */
  readonly version?: string;
}

/** One MCP session's server; `close` stops its polling and its transport. */
export interface SkillEngineMcpServer {
  readonly server: McpServer;
  close(): Promise<void>;
}

const INSTRUCTIONS =
  "A library of executable skills. Before a task: get_lessons. Then find_skills with the user's request, run_skill the best one " +
  "(with the route_id), and report with record_outcome (the invocation_id) or route_feedback. The use_skill_library prompt has the " +
  "whole loop; create_skill the rules for adding a skill.";

/**
 * How deeply a tool call's arguments may nest (docs/mcp.md#errors): far past what the API takes (128 levels in a
 * payload or schema), only so that the door's own walks of them (schema checks, JSON.stringify) cannot overflow
 * the stack on a few hundred kilobytes of brackets.
 */
const MAX_ARGUMENT_DEPTH = 256;

const META_BY_NAME = new Map(META_TOOLS.map((t) => [t.name, t]));
const META_DEFINITIONS: Tool[] = META_TOOLS.map((t: MetaTool) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: jsonSchemaOf(t.input, "input"),
  ...(t.output ? { outputSchema: jsonSchemaOf(t.output, "output") } : {}),
  annotations: t.annotations,
}));
const RESERVED = new Set(META_BY_NAME.keys());

/**
 * The MCP server of one session, over the skillengine.v1 API (docs/mcp.md#one-implementation): the same
 * for the stdio bin and the HTTP door; only the way it reaches the API and the caller's credentials differ.
 */
export function createMcpServer(options: McpServerOptions): SkillEngineMcpServer {
  const mode = options.tools ?? "meta";
  const { engine } = options;
  const server = new McpServer(
    { name: "skill-engine", title: "Skill engine", version: options.version ?? "0.0.0" },
    {
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true }, prompts: { listChanged: false } },
      instructions: INSTRUCTIONS,
    },
  );
  const invocations = new InvocationMemory();
  const scopeOf = (extra: RequestExtra): CallScope => ({ authorization: options.authorization(extra), signal: extra.signal });
  const contextOf = (extra: RequestExtra): ToolContext => ({ engine, scope: scopeOf(extra), invocations });

  server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
    const meta = mode === "skills" || request.params?.cursor !== undefined ? [] : META_DEFINITIONS;
    if (mode === "meta") return { tools: meta };
    try {
      const page = await skillToolsPage(engine, scopeOf(extra), request.params?.cursor, mode === "both" ? RESERVED : new Set());
      return { ...page, tools: [...meta, ...page.tools] };
    } catch (error) {
      throw resourceError(error, "tools/list");
    }
  });

  server.server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name } = request.params;
    const args = request.params.arguments ?? {};
    if (jsonDepth(args, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Invalid arguments for tool ${name}: nest arrays and objects more than ${MAX_ARGUMENT_DEPTH} levels deep; the limit is ${MAX_ARGUMENT_DEPTH}`,
      );
    }
    const meta = mode === "skills" ? undefined : META_BY_NAME.get(name);
    if (meta) {
      const parsed = meta.input.safeParse(args);
      if (!parsed.success)
        throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${describeIssues(parsed.error)}`);
      return meta.run(parsed.data as never, contextOf(extra));
    }
    if (mode === "meta") throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    // A skill's own tool: its name is the skill's, its arguments the payload.
    const context = contextOf(extra);
    try {
      return runResult(name, await invokeSkill(name, args, "", context), invocations);
    } catch (error) {
      if (isServiceError(error) && error.code === status.NOT_FOUND) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
      if (isServiceError(error) && error.code === status.INVALID_ARGUMENT) {
        throw new McpError(ErrorCode.InvalidParams, `Invalid arguments for tool ${name}: ${(error.details || error.message).trim()}`);
      }
      return toolResultOfRpcError(error);
    }
  });

  server.server.setRequestHandler(ListResourcesRequestSchema, async (_request, extra) => {
    try {
      return { resources: await listSkillResources(engine, scopeOf(extra)) };
    } catch (error) {
      throw resourceError(error, "resources/list");
    }
  });
  server.server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [SKILL_RESOURCE_TEMPLATE] }));
  server.server.setRequestHandler(ReadResourceRequestSchema, (request, extra) =>
    readSkillResource(engine, scopeOf(extra), request.params.uri),
  );
  registerPrompts(server);

  const poller = new ChangePoller(options, mode !== "meta", server);
  server.server.oninitialized = () => poller.start();
  const previousOnClose = server.server.onclose;
  server.server.onclose = () => {
    poller.stop();
    previousOnClose?.();
  };
  return {
    server,
    async close() {
      poller.stop();
      await server.close();
    },
  };
}

/**
 * Looks at the caller's catalog every `pollMs` and sends tools/list_changed (when skills are tools) and
 * resources/list_changed when what they list has changed (docs/mcp.md#change-notifications).
 */
class ChangePoller {
  private timer: NodeJS.Timeout | undefined;
  private tools: string | undefined;
  private resources: string | undefined;
  private busy = false;

  constructor(
    private readonly options: McpServerOptions,
    private readonly skillsAreTools: boolean,
    private readonly server: McpServer,
  ) {}

  start(): void {
    const every = this.options.pollMs ?? 5_000;
    if (every <= 0 || this.timer) return;
    void this.poll();
    this.timer = setInterval(() => void this.poll(), every);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private async poll(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const { engine } = this.options;
      const catalog = await wholeCatalog(engine, { authorization: this.options.authorization() });
      const tools = toolsFingerprint(catalog);
      const resources = resourcesFingerprint(catalog);
      if (this.tools !== undefined && tools !== this.tools && this.skillsAreTools) this.server.sendToolListChanged();
      if (this.resources !== undefined && resources !== this.resources) this.server.sendResourceListChanged();
      this.tools = tools;
      this.resources = resources;
    } catch (error) {
      this.options.onPollError?.(error);
    } finally {
      this.busy = false;
    }
  }
}
