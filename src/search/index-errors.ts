import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from "../errors/index.js";

/**
 * Why a backend cannot serve: routing falls back whatever the reason, but an operator fixes each
 * differently (docs/routing.md#qdrant).
 * - `unreachable`: connection refused, reset, DNS, TLS;
 * - `timeout`: no answer within the deadline, or Qdrant's own 408;
 * - `overloaded`: 429, 5xx;
 * - `unauthorized`: 401, a missing or wrong API key;
 * - `forbidden`: 403, a read-only key writing, or storage locked;
 * - `missing`: the collection disappeared (404) and must be created and filled again;
 * - `incompatible`: a collection of that name exists with other vector parameters (never ours to delete);
 * - `rejected`: any other refusal (400, 413, 422): a request this version of Qdrant does not accept.
 */
export type UnavailableReason =
  "unreachable" | "timeout" | "overloaded" | "unauthorized" | "forbidden" | "missing" | "incompatible" | "rejected";

/**
 * A routing index's backend cannot serve (Qdrant down, timing out, refusing our key, missing its
 * collection). Routing catches exactly this to fall back to the embedded indexes and report the
 * degradation; it is never a reason to fail a route or the start-up.
 */
export class VectorIndexUnavailableError extends UnavailableError {
  constructor(
    /** The adapter's `kind`, e.g. `qdrant`. */
    readonly backend: string,
    message: string,
    options?: { cause?: unknown; reason?: UnavailableReason },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.reason = options?.reason ?? "unreachable";
  }

  readonly reason: UnavailableReason;
}

/**
 * A vector's length differs from the index's dimensions: the embedder changed without
 * `ensure` being called, a bug in the caller rather than bad user input.
 */
export class VectorDimensionError extends FailedPreconditionError {
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(`vector has ${actual} dimensions but the index holds ${expected}; call ensure() after changing the embedder`);
  }
}

/** Checks a dimension count before it is written into SQL or sent to a backend. */
export function assertValidDimensions(dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536) {
    throw new InvalidArgumentError("dimensions", `must be an integer in 1..65536, got ${dimensions}`);
  }
}

/** Checks that an SQL identifier we interpolate (table names) is a plain word. */
export function assertSqlIdentifier(name: string, what: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new InvalidArgumentError(what, `must match [A-Za-z_][A-Za-z0-9_]*, got "${name}"`);
  }
}
