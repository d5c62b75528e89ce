import { type CallOptions, type ChannelCredentials, type ClientUnaryCall, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { GetCatalogRequest, GetCatalogResponse } from "../gen/skillengine/v1/composition.js";
import { PlaybookClient } from "../gen/skillengine/v1/playbook.js";
import { SkillEngineClient } from "../gen/skillengine/v1/skill_engine.js";
import { ListSkillsRequest, type Skill } from "../gen/skillengine/v1/skills.js";

/** A unary method of a generated client, called with `method.call(client, ...)`. */
export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => ClientUnaryCall;

/** Who a call is for and when it stops: the MCP request's credentials and its cancellation. */
export interface CallScope {
  /** Sent as the `authorization` metadata, as the MCP client gave it (`Bearer <token>`); none without tokens. */
  readonly authorization: string | undefined;
  /** Aborted when the MCP client cancels the request or goes away: the gRPC call is cancelled, and with it the run. */
  readonly signal?: AbortSignal;
}

export interface EngineClientOptions {
  /** gRPC target: `host:port`, or `unix:/path` for the service's private socket. */
  readonly address: string;
  readonly credentials: ChannelCredentials;
  /**
   * Deadline of each call. A registration may build a package environment first (up to
   * SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS, 300 s by default), so the default leaves room for that. @default 600 s
   */
  readonly timeoutMs?: number;
}

/**
 * The largest answer read: a run's inline output files (SKILL_ENGINE_OUTPUT_INLINE_MB, at most 256 MiB),
 * its two streams (at most 64 MiB each) and 8 MiB for the rest, as skillctl reads (docs/files.md#message-sizes).
 */
const MAX_RECEIVE_MESSAGE_BYTES = (256 + 2 * 64 + 8) * 1024 * 1024;
/** The HTTP/2 flow-control window advertised to the service, per stream and for the connection. */
const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 600_000;

/**
 * The skillengine.v1 API as the MCP door calls it: the generated clients on one channel, each call
 * promisified with the caller's credentials, a deadline, and cancellation from an AbortSignal.
 */
export class EngineClient {
  readonly skills: SkillEngineClient;
  readonly playbook: PlaybookClient;
  private readonly timeoutMs: number;

  constructor(options: EngineClientOptions) {
    this.skills = new SkillEngineClient(options.address, options.credentials, {
      "grpc.max_receive_message_length": MAX_RECEIVE_MESSAGE_BYTES,
      // HTTP/2's 64 KiB window paused every answer each 64 KiB (as skillctl: docs/performance.md#where-the-time-goes).
      "grpc-node.flow_control_window": FLOW_CONTROL_WINDOW_BYTES,
    });
    this.playbook = new PlaybookClient(options.address, options.credentials, { channelOverride: this.skills.getChannel() });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** A SkillEngine call: `engine.call(engine.skills.invokeSkill, request, scope)`. */
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, scope: CallScope): Promise<Res> {
    return this.unary(this.skills, method, request, scope);
  }

  /** A Playbook call on the same channel. */
  callPlaybook<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, scope: CallScope): Promise<Res> {
    return this.unary(this.playbook, method, request, scope);
  }

  close(): void {
    this.playbook.close();
    this.skills.close();
  }

  private unary<Req, Res>(
    client: SkillEngineClient | PlaybookClient,
    method: UnaryMethod<Req, Res>,
    request: Req,
    scope: CallScope,
  ): Promise<Res> {
    return new Promise<Res>((resolve, reject) => {
      const metadata = new Metadata();
      if (scope.authorization !== undefined) metadata.set("authorization", scope.authorization);
      const { signal } = scope;
      if (signal?.aborted) {
        reject(cancelledError());
        return;
      }
      // The server sees the cancel as the client going away: the run's signal fires and its container is stopped.
      const onAbort = (): void => call.cancel();
      const call = method.call(client, request, metadata, { deadline: Date.now() + this.timeoutMs }, (error, response) => {
        signal?.removeEventListener("abort", onAbort);
        if (error) reject(error);
        else resolve(response);
      });
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}

function cancelledError(): ServiceError {
  return Object.assign(new Error("CANCELLED: the MCP request was cancelled"), {
    code: status.CANCELLED,
    details: "the MCP request was cancelled",
    metadata: new Metadata(),
  });
}

/** A gRPC error as the generated client reports it. */
export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number" && "metadata" in error;
}

/** Pages read at most by `allPages`: past that, the list is cut rather than read forever. */
const MAX_PAGES = 1_000;

/**
 * Every item of a paginated list RPC (docs/api.md#pagination), page after page with the same filters:
 * MCP's lists here are built from whole catalogs (the tools of a caller, its folder skills).
 */
export async function allPages<T>(page: (pageToken: string) => Promise<{ items: T[]; nextPageToken: string }>): Promise<T[]> {
  const items: T[] = [];
  let token = "";
  for (let pages = 0; pages < MAX_PAGES; pages += 1) {
    const answer = await page(token);
    items.push(...answer.items);
    if (!answer.nextPageToken) break;
    token = answer.nextPageToken;
  }
  return items;
}

/** The caller's whole catalog (GetCatalog, every page). */
export async function wholeCatalog(engine: EngineClient, scope: CallScope): Promise<GetCatalogResponse> {
  const skills = await allPages(async (pageToken) => {
    const r = await engine.call(engine.skills.getCatalog, GetCatalogRequest.fromPartial({ pageToken }), scope);
    return { items: r.skills, nextPageToken: r.nextPageToken };
  });
  return GetCatalogResponse.fromPartial({ skills });
}

/** Every skill the caller may see with these filters (ListSkills, every page). */
export async function allSkills(
  engine: EngineClient,
  scope: CallScope,
  filters: { owner?: string; includeInactive?: boolean } = {},
): Promise<Skill[]> {
  return allPages(async (pageToken) => {
    const r = await engine.call(engine.skills.listSkills, ListSkillsRequest.fromPartial({ ...filters, pageToken }), scope);
    return { items: r.skills, nextPageToken: r.nextPageToken };
  });
}
