import { type CallOptions, type ChannelCredentials, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { PlaybookClient } from "../../gen/skillengine/v1/playbook.js";
import { SkillEngineClient } from "../../gen/skillengine/v1/skill_engine.js";

export type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<CallOptions>,
  callback: (error: ServiceError | null, response: Res) => void,
) => unknown;

/** The generated client with one promise-returning call helper that always sets a deadline. */
export interface Rpc {
  readonly raw: SkillEngineClient;
  call<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res>;
  /** The Playbook service on the same channel, token and deadline. */
  readonly playbook: PlaybookClient;
  callPlaybook<Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res>;
  close(): void;
}

export interface ConnectOptions {
  timeoutMs: number;
  channel: ChannelCredentials;
  /** Sent as `authorization: Bearer <token>` on every call (plaintext channels included: the service may be local). */
  token?: string | undefined;
}

/**
 * The largest answer skillctl reads: the largest the service sends under any configuration, returned
 * files inline (SKILL_ENGINE_OUTPUT_INLINE_MB, at most 256 MiB), stdout and stderr (each at most
 * SKILL_ENGINE_OUTPUT_LIMIT_BYTES' 64 MiB) and 8 MiB for the rest (docs/files.md#message-sizes).
 * grpc-js reads only 4 MiB by default.
 */
export const MAX_RECEIVE_MESSAGE_BYTES = (256 + 2 * 64 + 8) * 1024 * 1024;

/**
 * The HTTP/2 flow-control window skillctl advertises, per stream and for the connection. grpc-js keeps
 * HTTP/2's 64 KiB, so the service paused for a window update every 64 KiB of an answer: ≈ 3–6 ms on an
 * answer carrying a 1 MiB file on loopback (docs/performance.md#where-the-time-goes).
 */
export const FLOW_CONTROL_WINDOW_BYTES = 16 * 1024 * 1024;

export function connect(address: string, options: ConnectOptions): Rpc {
  const raw = new SkillEngineClient(address, options.channel, {
    "grpc.max_receive_message_length": MAX_RECEIVE_MESSAGE_BYTES,
    "grpc-node.flow_control_window": FLOW_CONTROL_WINDOW_BYTES,
  });
  const metadata = (): Metadata => {
    const m = new Metadata();
    if (options.token !== undefined) m.set("authorization", `Bearer ${options.token}`);
    return m;
  };
  const playbook = new PlaybookClient(address, options.channel, { channelOverride: raw.getChannel() });
  const invoke =
    (client: SkillEngineClient | PlaybookClient) =>
    <Req, Res>(method: UnaryMethod<Req, Res>, request: Req): Promise<Res> =>
      new Promise<Res>((resolve, reject) => {
        method.call(client, request, metadata(), { deadline: Date.now() + options.timeoutMs }, (error, response) =>
          error ? reject(error) : resolve(response),
        );
      });
  return {
    raw,
    call: invoke(raw),
    playbook,
    callPlaybook: invoke(playbook),
    close: () => {
      playbook.close();
      raw.close();
    },
  };
}

export function isServiceError(error: unknown): error is ServiceError {
  return error instanceof Error && typeof (error as Partial<ServiceError>).code === "number" && "metadata" in error;
}

/** `NOT_FOUND` for 5, and so on. */
export function codeName(code: number): string {
  return (status as unknown as Record<number, string | undefined>)[code] ?? `CODE_${code}`;
}

/** `NOT_FOUND: skill "x" not found` — the code name and the server's details. */
export function describeRpcError(error: ServiceError): string {
  return `${codeName(error.code)}: ${(error.details || error.message).trim()}`;
}

/** What the operator can do about an error, when skillctl knows better than the bare status. */
export function rpcErrorHint(
  error: ServiceError,
  context: { address: string; tokenOrigin: string; tokenGiven: boolean; tls: boolean },
): string | undefined {
  if (error.code === status.UNAUTHENTICATED) {
    return context.tokenGiven
      ? `hint: the service refused the token from ${context.tokenOrigin}; set SKILLCTL_TOKEN or --token-file to a valid one`
      : "hint: this service requires a token: set SKILLCTL_TOKEN or --token-file";
  }
  if (error.code === status.UNAVAILABLE) {
    const details = `${error.details} ${error.message}`;
    if (/certificate|self[- ]signed|unable to verify|altnames/i.test(details)) {
      return "hint: the server's TLS certificate is not trusted for this address: give its CA with --tls-ca (or $SKILLCTL_TLS_CA)";
    }
    if (context.tls && /wrong version number|packet length too long|unknown protocol|EPROTO/i.test(details)) {
      return "hint: the server does not seem to speak TLS on this port (drop --tls / --tls-ca?)";
    }
    if (!context.tls && /No connection established/i.test(details)) {
      return `hint: no gRPC service answered at ${context.address}: is it running there (--address, $SKILLCTL_ADDRESS)? If it serves TLS, add --tls-ca or --tls`;
    }
  }
  return undefined;
}
