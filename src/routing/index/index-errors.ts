import { status } from "@grpc/grpc-js";
import { SkillEngineError } from "../../errors.js";

/**
 * A routing index's backend cannot be reached (Qdrant down, timing out, overloaded). Routing
 * catches exactly this to fall back to the embedded indexes and report the degradation.
 */
export class VectorIndexUnavailableError extends SkillEngineError {
  constructor(
    /** The adapter's `kind`, e.g. `qdrant`. */
    readonly backend: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(status.UNAVAILABLE, message, options);
    this.name = "VectorIndexUnavailableError";
  }
}

/**
 * A vector's length differs from the index's dimensions: the embedder changed without
 * `ensure` being called, a bug in the caller rather than bad user input.
 */
export class VectorDimensionError extends SkillEngineError {
  constructor(
    readonly expected: number,
    readonly actual: number,
  ) {
    super(
      status.FAILED_PRECONDITION,
      `vector has ${actual} dimensions but the index holds ${expected}; call ensure() after changing the embedder`,
    );
    this.name = "VectorDimensionError";
  }
}

/** Translates a SQLite failure inside a routing index into a service error, in one place. */
export function fromIndexSqliteError(error: unknown, action: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") {
    return new SkillEngineError(status.UNAVAILABLE, `the routing index is busy; could not ${action}, retry`, {
      cause: error,
    });
  }
  if (code === "SQLITE_FULL") {
    return new SkillEngineError(status.RESOURCE_EXHAUSTED, `the disk is full; could not ${action}`, { cause: error });
  }
  return new SkillEngineError(status.INTERNAL, `routing index error: could not ${action}: ${message}`, {
    cause: error,
  });
}

/** Checks a dimension count before it is written into SQL or sent to a backend. */
export function assertValidDimensions(dimensions: number): void {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 65_536) {
    throw new SkillEngineError(status.INVALID_ARGUMENT, `vector dimensions must be an integer in 1..65536, got ${dimensions}`);
  }
}

/** Checks that an SQL identifier we interpolate (table names) is a plain word. */
export function assertSqlIdentifier(name: string, what: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new SkillEngineError(status.INVALID_ARGUMENT, `${what} must match [A-Za-z_][A-Za-z0-9_]*, got "${name}"`);
  }
}
