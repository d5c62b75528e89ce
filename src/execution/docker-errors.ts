import { InternalError, SandboxUnavailableError, SkillEngineError } from "../errors/index.js";

interface DockerishError {
  statusCode?: number;
  code?: string;
  /** Set on filesystem errors (our own run-directory work), never on engine errors. */
  path?: string;
  message?: string;
  json?: { message?: string } | null;
}

const CONNECTION_CODES = new Set(["ECONNREFUSED", "ENOENT", "EACCES", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH"]);

/** True when the engine says the object is already gone (idempotent outcomes of remove/kill). */
export function isAlreadyGone(error: unknown): boolean {
  const e = error as DockerishError;
  if (e?.statusCode === 404) return true;
  // 409: "removal already in progress" / "container is not running".
  return e?.statusCode === 409 && /in progress|is not running|not running/i.test(detailOf(e));
}

/** The one place where dockerode failures become service errors with a gRPC status. */
export function fromDockerError(error: unknown, context: { image: string; action: string }): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const e = error as DockerishError;
  const detail = detailOf(e);
  if (typeof e?.path === "string") {
    return new InternalError(`could not ${context.action}: ${detail}`, { cause: error });
  }
  if (e?.code && CONNECTION_CODES.has(e.code)) {
    return new SandboxUnavailableError(
      `the Docker engine cannot be reached (${e.code}) while trying to ${context.action}; ` +
        "start it (npm run setup) or point DOCKER_HOST at a running engine",
      { cause: error },
    );
  }
  if (e?.statusCode === 404 && /no such image/i.test(detail)) {
    return new SandboxUnavailableError(`the sandbox image ${context.image} is missing; build it with npm run setup`, { cause: error });
  }
  if (e?.statusCode === 500 || e?.statusCode === 503) {
    return new SandboxUnavailableError(`the Docker engine failed to ${context.action}: ${detail}`, { cause: error });
  }
  return new InternalError(`Docker engine error while trying to ${context.action}: ${detail}`, {
    cause: error,
  });
}

function detailOf(e: DockerishError): string {
  return (e?.json?.message ?? e?.message ?? String(e)).trim();
}
