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
import { type CatalogFingerprints, catalogReader, CatalogWatch } from "./catalog-watch.js";
import { type CallScope, type EngineClient, isServiceError } from "./engine-client.js";
import { InvocationMemory, invokeSkill, META_TOOLS, type MetaTool, runResult, type ToolContext } from "./meta-tools.js";
import { registerPrompts } from "./prompts.js";
import { listSkillResources, readSkillResource, resourceError, SKILL_RESOURCE_TEMPLATE } from "./skill-resources.js";
import { skillToolsPage } from "./skill-tools.js";
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
  /**
   * How often the session looks for changes of the caller's skills (list_changed); 0: never. With
   * `catalogWatch`, the watch's own interval is how often catalogs are read; this one how often the
   * session looks whether its credentials changed. @default 5000
   */
  readonly pollMs?: number;
  /**
   * The change polls this session joins, shared with the other sessions of its door so that a caller's
   * catalog is watched once however many sessions it has (docs/mcp.md#change-notifications). Unset: the
   * session watches on its own (the stdio bin's one session).
   */
  readonly catalogWatch?: CatalogWatch;
  /**
   * The `authorization` metadata of a request's gRPC calls: the HTTP request's own bearer token, or the stdio
   * bin's token; called without a request for the session's polls (its latest credentials).
   */
  authorization(extra?: RequestExtra): string | undefined;
  /** Where failed polls are told (they are retried at the next interval); without `catalogWatch` only. */
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
const DEFAULT_POLL_MS = 5_000;

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

  const pollMs = options.pollMs ?? DEFAULT_POLL_MS;
  const watch =
    options.catalogWatch ??
    new CatalogWatch(catalogReader(engine), { pollMs, ...(options.onPollError ? { onError: options.onPollError } : {}) });
  // The session's own watch, when its door shares none, is closed with the session.
  const ownWatch = watch === options.catalogWatch ? undefined : watch;
  const poller = new ChangePoller(watch, options, pollMs, mode !== "meta", server);
  server.server.oninitialized = () => poller.start();
  const previousOnClose = server.server.onclose;
  server.server.onclose = () => {
    poller.stop();
    ownWatch?.close();
    previousOnClose?.();
  };
  return {
    server,
    async close() {
      poller.stop();
      ownWatch?.close();
      await server.close();
    },
  };
}

/**
 * A session's part in the change polls (docs/mcp.md#change-notifications): it watches its caller's catalog
 * through the shared {@link CatalogWatch} and sends tools/list_changed (when skills are tools) and
 * resources/list_changed when the fingerprints of a read differ from the last ones it saw. The caller's
 * credentials may change between requests (the HTTP door keeps the latest): the session then joins the
 * watch of the new ones, checked every `pollMs` without a call.
 */
class ChangePoller {
  private timer: NodeJS.Timeout | undefined;
  private seen: CatalogFingerprints | undefined;
  private watched: { readonly authorization: string | undefined; readonly stop: () => void } | undefined;

  constructor(
    private readonly watch: CatalogWatch,
    private readonly options: McpServerOptions,
    private readonly pollMs: number,
    private readonly skillsAreTools: boolean,
    private readonly server: McpServer,
  ) {}

  start(): void {
    if (this.pollMs <= 0 || this.timer) return;
    this.follow();
    this.timer = setInterval(() => this.follow(), this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.watched?.stop();
    this.watched = undefined;
  }

  /** Joins the watch of the session's current credentials, when they are not the ones watched. */
  private follow(): void {
    const authorization = this.options.authorization();
    if (this.watched && this.watched.authorization === authorization) return;
    this.watched?.stop();
    this.watched = { authorization, stop: this.watch.subscribe(authorization, (read) => this.compare(read)) };
  }

  private compare(read: CatalogFingerprints): void {
    const seen = this.seen;
    this.seen = read;
    // The first read is the baseline: what the client lists at the start is not a change.
    if (seen === undefined || !this.timer) return;
    if (this.skillsAreTools && read.tools !== seen.tools) this.server.sendToolListChanged();
    if (read.resources !== seen.resources) this.server.sendResourceListChanged();
  }
}
