import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Metadata, type sendUnaryData, type ServerErrorResponse, type ServerUnaryCall, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { CallContext } from "../control/index.js";
import { RunCancelledError } from "../errors/index.js";
import type { Authenticator, Caller } from "../identity/index.js";
import type { ServiceMetrics } from "../observability/index.js";
import { signalOf } from "./call-context.js";
import { toCallerError } from "./error-status.js";
import { UndecodableRequest } from "./request-decoding.js";

const REQUEST_ID_HEADER = "x-request-id";
/** The end user a delegating agent acts for (docs/security.md#users-and-delegation). */
const USER_ID_HEADER = "x-user-id";

export interface UnaryDependencies {
  readonly authenticator: Authenticator;
  readonly logger: Logger;
  readonly metrics?: ServiceMetrics;
}

/**
 * Wraps a handler of every service (SkillEngine, Playbook) so every outcome reaches the client
 * exactly once: the caller is authenticated first (UNAUTHENTICATED before any work); a request the
 * decoder refused then answers INVALID_ARGUMENT (request-decoding.ts); the call context's signal
 * fires on cancellation or deadline; a domain error becomes its status and message
 * (error-status.ts); anything else is logged and answered INTERNAL without details; one `rpc` log
 * line and one metric sample per call, with the x-request-id echoed back. `logFields` adds ids of
 * the service's own to the log line (a skill's name and version; never code, payloads or texts).
 */
export function unaryHandler<Req, Res>(
  deps: UnaryDependencies,
  method: string,
  handler: (request: Req, context: CallContext) => Promise<Res>,
  logFields?: (request: Req, response: Res | undefined) => Record<string, unknown>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  const { authenticator, logger, metrics } = deps;
  return (call, callback) => {
    const { signal, dispose } = signalOf(call);
    const started = performance.now();
    const requestId = requestIdOf(call.metadata);
    const reply = new Metadata();
    reply.set(REQUEST_ID_HEADER, requestId);
    call.sendMetadata(reply);
    let caller: Caller | undefined;
    const done = (code: status, response?: Res): void => {
      const seconds = (performance.now() - started) / 1000;
      metrics?.recordRpc(method, status[code] ?? String(code), seconds);
      // Ids only: code, payloads, lesson texts, queries and tokens never reach the log above debug.
      const line = {
        requestId,
        method,
        code: status[code],
        ms: Math.round(seconds * 1000),
        agent: caller?.agentId,
        ...(caller?.userId === undefined ? {} : { user: caller.userId }),
        ...(call.request instanceof UndecodableRequest ? {} : logFields?.(call.request, response)),
      };
      if (code === status.UNAUTHENTICATED) logger.warn({ ...line, peer: call.getPeer() }, "rpc refused: no valid token");
      else logger.info(line, "rpc");
    };
    Promise.resolve()
      .then(() => {
        const value = call.metadata.get("authorization")[0];
        caller = authenticator.authenticate(typeof value === "string" ? value : undefined);
        const user = call.metadata.get(USER_ID_HEADER)[0];
        caller = authenticator.actingFor(caller, typeof user === "string" ? user : undefined);
        // Who it was for goes to the rpc line below, not into a label (docs/operations.md#metrics).
        if (caller.userId !== undefined) metrics?.recordDelegatedCall(method);
        // Bytes the decoder refused arrive here (request-decoding.ts), after authentication.
        const request: unknown = call.request;
        if (request instanceof UndecodableRequest) throw request.error;
        return handler(call.request, { caller, requestId, signal });
      })
      .then(
        (response) => {
          done(status.OK, response);
          callback(null, response);
        },
        (error: unknown) => {
          const serviceError = toServiceError(logger, method, error);
          done(serviceError.code ?? status.UNKNOWN);
          callback(serviceError);
        },
      )
      .finally(dispose);
  };
}

/** The caller's x-request-id when it sent a sane one, else a new id. */
function requestIdOf(metadata: Metadata): string {
  const sent = metadata.get(REQUEST_ID_HEADER)[0];
  return typeof sent === "string" && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
}

/** Logs what the operator must see (bugs, and infrastructure failures: internal, unavailable) and answers the caller. */
function toServiceError(logger: Logger, method: string, error: unknown): ServerErrorResponse {
  const { response, unexpected } = toCallerError(error);
  if (unexpected) {
    logger.error({ err: error, method }, "unexpected error");
  } else if (!(error instanceof RunCancelledError) && (response.code === status.INTERNAL || response.code === status.UNAVAILABLE)) {
    // A run cancelled, past its deadline or cut off by shutdown is expected; the rpc line says so.
    logger.error({ err: error, method }, "request failed");
  }
  return response;
}
