import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from "@qdrant/js-client-rest";
import { errorMessage, InternalError, SkillEngineError } from "../errors/index.js";
import { type UnavailableReason, VectorIndexUnavailableError } from "./index-errors.js";

/** Network failures that mean "Qdrant is not there (right now)", as Node's fetch reports them. */
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_CLOSED",
]);

/**
 * The one place where the Qdrant client's failures become domain errors (docs/routing.md#qdrant).
 *
 * Whatever Qdrant answers, or fails to, routing must go on from the embedded index and say why:
 * every failure of a request that reached (or tried to reach) Qdrant becomes
 * {@link VectorIndexUnavailableError} with a reason an operator can act on. Only a client error
 * with no HTTP answer and no network cause (a bug of ours) stays internal.
 */
export function fromQdrantError(error: unknown, action: string, endpoint: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const unavailable = (reason: UnavailableReason, message: string): VectorIndexUnavailableError =>
    new VectorIndexUnavailableError("qdrant", `${message}; could not ${action}`, { cause: error, reason });
  if (error instanceof QdrantClientTimeoutError) return unavailable("timeout", `Qdrant at ${endpoint} did not answer in time`);
  if (error instanceof QdrantClientResourceExhaustedError) {
    return unavailable("overloaded", `Qdrant at ${endpoint} is rate limiting (retry after ${error.retry_after}s)`);
  }
  if (error instanceof QdrantClientUnexpectedResponseError) {
    return unavailable("rejected", `Qdrant at ${endpoint} gave an unexpected answer (${error.message})`);
  }
  const httpStatus = httpStatusOf(error);
  if (httpStatus !== undefined) {
    const detail = qdrantMessage(error) ?? `HTTP ${httpStatus}`;
    switch (httpStatus) {
      case 401:
        return unavailable("unauthorized", `Qdrant at ${endpoint} refused the API key (401: ${detail}); check QDRANT_API_KEY`);
      case 403:
        return unavailable(
          "forbidden",
          `Qdrant at ${endpoint} forbade it (403: ${detail}); a read-only API key, or storage locked by the operator`,
        );
      case 404:
        return unavailable("missing", `Qdrant at ${endpoint} has no such collection (404: ${detail})`);
      case 408:
        return unavailable("timeout", `Qdrant at ${endpoint} timed out on its side (408: ${detail})`);
      default:
        if (httpStatus === 429 || httpStatus >= 500) return unavailable("overloaded", `Qdrant at ${endpoint} failed (${detail})`);
        return unavailable("rejected", `Qdrant at ${endpoint} rejected the request (${httpStatus}: ${detail})`);
    }
  }
  const code = networkCode(error);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return unavailable(
      code === "ETIMEDOUT" || code === "UND_ERR_CONNECT_TIMEOUT" ? "timeout" : "unreachable",
      `Qdrant at ${endpoint} is unreachable (${code})`,
    );
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    // Node's fetch hides odd socket and TLS failures behind this one message; none of them is our bug.
    return unavailable(
      "unreachable",
      `Qdrant at ${endpoint} is unreachable (${errorMessage((error as { cause?: unknown }).cause ?? error)})`,
    );
  }
  return new InternalError(`Qdrant client error; could not ${action}: ${errorMessage(error)}`, { cause: error });
}

/** The client throws its fetcher's `ApiError` (not exported by the client) for non-2xx answers. */
function httpStatusOf(error: unknown): number | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const candidate = (error as { status?: unknown }).status;
  return typeof candidate === "number" && "data" in error ? candidate : undefined;
}

/** Qdrant explains failures as `{"status": {"error": "…"}}`. */
function qdrantMessage(error: unknown): string | undefined {
  const data = (error as { data?: unknown }).data;
  if (typeof data === "string" && data.length > 0) return data.slice(0, 300);
  const message = (data as { status?: { error?: unknown } } | undefined)?.status?.error;
  return typeof message === "string" ? message.slice(0, 300) : undefined;
}

/** Walks `cause` links (fetch → undici → system error) for the first error code. */
function networkCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
