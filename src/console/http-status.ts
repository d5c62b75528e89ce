import { type ErrorKind, SkillEngineError } from "../errors/index.js";

const STATUS_OF_KIND: Record<ErrorKind, number> = {
  "invalid-argument": 400,
  "not-found": 404,
  "already-exists": 409,
  "failed-precondition": 409,
  "permission-denied": 403,
  unauthenticated: 401,
  "resource-exhausted": 429,
  unavailable: 503,
  conflict: 409,
  cancelled: 499,
  "deadline-exceeded": 504,
  internal: 500,
};

/** The HTTP status and the message a person sees for a failure of a use case (the same kinds the RPCs map to gRPC statuses). */
export function httpErrorOf(error: unknown): { status: number; message: string; unexpected: boolean } {
  if (error instanceof SkillEngineError) {
    const status = STATUS_OF_KIND[error.kind];
    return { status, message: error.message, unexpected: status === 500 };
  }
  return { status: 500, message: "internal error: the service log has the details", unexpected: true };
}

/** A peer address on this machine's loopback: 127.0.0.0/8, ::1, or 127.x mapped into IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (address === undefined) return false;
  return address === "::1" || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/i.test(address);
}
