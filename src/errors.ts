import { status } from "@grpc/grpc-js";

/**
 * The one error type that crosses layer boundaries. It carries the gRPC status the caller
 * will see, so handlers never guess codes: adapters translate their own failures into it
 * in one place (`fromDockerError`, `fromSqliteError`).
 */
export class SkillEngineError extends Error {
  constructor(
    readonly code: status,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "SkillEngineError";
  }
}

/** A request field is malformed; the message names the field and the reason. */
export class InvalidArgumentError extends SkillEngineError {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super(status.INVALID_ARGUMENT, `${field}: ${reason}`);
    this.name = "InvalidArgumentError";
  }
}

/** No skill with that name is registered. */
export class SkillNotFoundError extends SkillEngineError {
  constructor(readonly skillName: string) {
    super(status.NOT_FOUND, `no skill named "${skillName}" is registered`);
    this.name = "SkillNotFoundError";
  }
}

/** The TDD run of a registration failed; the message is the one-line cause. */
export class SkillTestFailedError extends SkillEngineError {
  constructor(
    readonly skillName: string,
    cause: string,
  ) {
    super(status.FAILED_PRECONDITION, cause);
    this.name = "SkillTestFailedError";
  }
}

/** The sandbox engine (Docker) cannot be reached or cannot run the sandbox image. */
export class SandboxUnavailableError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(status.UNAVAILABLE, message, options);
    this.name = "SandboxUnavailableError";
  }
}

/** The run queue is full; the caller should retry later. */
export class QueueFullError extends SkillEngineError {
  constructor(
    readonly running: number,
    readonly queued: number,
  ) {
    super(
      status.RESOURCE_EXHAUSTED,
      `sandbox run queue is full (${running} running, ${queued} waiting); retry later`,
    );
    this.name = "QueueFullError";
  }
}

/** The caller cancelled or its deadline passed before the run finished. */
export class RunCancelledError extends SkillEngineError {
  constructor(reason: "cancelled" | "deadline" | "shutdown") {
    const code =
      reason === "deadline"
        ? status.DEADLINE_EXCEEDED
        : reason === "shutdown"
          ? status.UNAVAILABLE
          : status.CANCELLED;
    const message =
      reason === "shutdown"
        ? "the service is shutting down; the run was stopped"
        : reason === "deadline"
          ? "the call's deadline passed; the run was stopped"
          : "the call was cancelled; the run was stopped";
    super(code, message);
    this.name = "RunCancelledError";
  }
}

/** Anything else: a bug or an unexpected environment failure. */
export class InternalError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(status.INTERNAL, message, options);
    this.name = "InternalError";
  }
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
