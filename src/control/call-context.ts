import type { Caller } from "../identity/index.js";

/**
 * Who is calling and how long they will wait: the second argument of every use case, beside its one
 * input object (connect-es's `HandlerContext`). Built by the gRPC layer from the call's metadata and
 * deadline, by the console from its session, by sweeps and scans as a service caller; its signal
 * travels down to the container.
 */
export interface CallContext {
  readonly caller: Caller;
  /** Correlates the service's log lines of one call (and the client's, via x-request-id). */
  readonly requestId?: string;
  /** Fires when the caller cancels or its deadline passes: the run (and its container) stops. */
  readonly signal?: AbortSignal;
  /** The caller's idempotency key for an invocation (docs/execution-hosts.md#at-most-once). */
  readonly idempotencyKey?: string;
}
