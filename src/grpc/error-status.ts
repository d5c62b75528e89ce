import { Metadata, type ServerErrorResponse, status } from "@grpc/grpc-js";
import { type ErrorKind, SkillEngineError } from "../errors/index.js";

/** The one map from the domain's error kinds to the gRPC status a caller sees. */
const STATUS_OF_KIND: Readonly<Record<ErrorKind, status>> = {
  "invalid-argument": status.INVALID_ARGUMENT,
  "not-found": status.NOT_FOUND,
  "already-exists": status.ALREADY_EXISTS,
  "failed-precondition": status.FAILED_PRECONDITION,
  "permission-denied": status.PERMISSION_DENIED,
  unauthenticated: status.UNAUTHENTICATED,
  "resource-exhausted": status.RESOURCE_EXHAUSTED,
  unavailable: status.UNAVAILABLE,
  conflict: status.ABORTED,
  cancelled: status.CANCELLED,
  "deadline-exceeded": status.DEADLINE_EXCEEDED,
  internal: status.INTERNAL,
};

/** The status for a domain error kind. */
export function statusOfKind(kind: ErrorKind): status {
  return STATUS_OF_KIND[kind];
}

/** What a caller learns of a failure: a domain error's status and message; of anything else, INTERNAL and nothing more. */
export interface CallerError {
  readonly response: ServerErrorResponse;
  /** Not a domain error: a bug, whose details stay in the service log. */
  readonly unexpected: boolean;
}

const HIDDEN_MESSAGE = "internal error; the service log has the details";

/** Turns anything a handler threw into the error the client receives. */
export function toCallerError(error: unknown): CallerError {
  if (error instanceof SkillEngineError) {
    return { response: serviceError(statusOfKind(error.kind), error.message), unexpected: false };
  }
  return { response: serviceError(status.INTERNAL, HIDDEN_MESSAGE), unexpected: true };
}

function serviceError(code: status, message: string): ServerErrorResponse {
  return Object.assign(new Error(message), { code, details: message, metadata: new Metadata() });
}
