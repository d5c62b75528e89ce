import { QdrantClientResourceExhaustedError, QdrantClientTimeoutError, QdrantClientUnexpectedResponseError } from "@qdrant/js-client-rest";
import { errorMessage, FailedPreconditionError, InternalError, SkillEngineError } from "../../errors/index.js";
import { VectorIndexUnavailableError } from "./index-errors.js";

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

/** HTTP answers after which a retry or a fallback may succeed. */
const TRANSIENT_STATUSES = new Set([429, 502, 503, 504]);

/**
 * The one place where the Qdrant client's failures become domain errors.
 *
 * Anything that means "Qdrant cannot serve us now" (refused connection, DNS, timeout, 429, 5xx
 * gateway errors) becomes {@link VectorIndexUnavailableError} so routing can fall back; a 404 on
 * the collection means `ensure` was never called; any other HTTP error is a request we built
 * wrong, so an internal error with Qdrant's own message.
 */
export function fromQdrantError(error: unknown, action: string, endpoint: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  if (error instanceof QdrantClientTimeoutError) {
    return new VectorIndexUnavailableError("qdrant", `Qdrant at ${endpoint} did not answer in time; could not ${action}`, {
      cause: error,
    });
  }
  if (error instanceof QdrantClientResourceExhaustedError) {
    return new VectorIndexUnavailableError(
      "qdrant",
      `Qdrant at ${endpoint} is rate limiting (retry after ${error.retry_after}s); could not ${action}`,
      { cause: error },
    );
  }
  if (error instanceof QdrantClientUnexpectedResponseError) {
    return new InternalError(`Qdrant gave an unexpected answer; could not ${action}: ${error.message}`, {
      cause: error,
    });
  }
  const httpStatus = httpStatusOf(error);
  if (httpStatus !== undefined) {
    const detail = qdrantMessage(error) ?? `HTTP ${httpStatus}`;
    if (TRANSIENT_STATUSES.has(httpStatus) || httpStatus >= 500) {
      return new VectorIndexUnavailableError("qdrant", `Qdrant at ${endpoint} failed (${detail}); could not ${action}`, {
        cause: error,
      });
    }
    if (httpStatus === 404) {
      return new FailedPreconditionError(`Qdrant has no such collection (${detail}); call ensure(dimensions) first; could not ${action}`, {
        cause: error,
      });
    }
    return new InternalError(`Qdrant rejected the request (${detail}); could not ${action}`, {
      cause: error,
    });
  }
  const code = networkCode(error);
  if (code !== undefined && UNREACHABLE_CODES.has(code)) {
    return new VectorIndexUnavailableError("qdrant", `Qdrant at ${endpoint} is unreachable (${code}); could not ${action}`, {
      cause: error,
    });
  }
  if (error instanceof TypeError && error.message === "fetch failed") {
    // Node's fetch hides odd socket failures behind this one message; none of them is our bug.
    return new VectorIndexUnavailableError("qdrant", `Qdrant at ${endpoint} is unreachable; could not ${action}`, {
      cause: error,
    });
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
