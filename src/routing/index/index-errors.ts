import { FailedPreconditionError, InvalidArgumentError, UnavailableError } from "../../errors/index.js";

/**
 * A routing index's backend cannot be reached (Qdrant down, timing out, overloaded). Routing
 * catches exactly this to fall back to the embedded indexes and report the degradation.
 */
export class VectorIndexUnavailableError extends UnavailableError {
  constructor(
    /** The adapter's `kind`, e.g. `qdrant`. */
    readonly backend: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
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
