import { InternalError, SandboxUnavailableError, SkillEngineError } from "../../errors/index.js";

interface DockerishError {
  statusCode?: number;
  code?: string;
  /** Set on filesystem errors (our own run-directory work), never on engine errors. */
  path?: string;
  message?: string;
  json?: { message?: string } | null;
}

/** A full disk, a full quota, or a file system turned read-only under the sandbox directory. */
const HOST_DISK_CODES = new Set(["ENOSPC", "EDQUOT", "EROFS"]);

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
  // The host side of the sandbox (run directories; a write on a descriptor carries no path): a
  // full or read-only disk is the host's fault, never the skill's
  // (docs/skill-lifecycle.md#what-counts-against-a-skill). The engine's own errors carry HTTP
  // statuses, never these codes.
  if (e?.code && HOST_DISK_CODES.has(e.code)) {
    return new SandboxUnavailableError(
      `the sandbox directory's disk cannot take the run (${e.code}) while trying to ${context.action}; ` +
        "free space under SKILL_ENGINE_SANDBOX_DIR and retry",
      "host-disk-full",
      { cause: error },
    );
  }
  if (typeof e?.path === "string") {
    return new InternalError(`could not ${context.action}: ${detail}`, { cause: error });
  }
  if (e?.code && CONNECTION_CODES.has(e.code)) {
    return new SandboxUnavailableError(
      `the Docker engine cannot be reached (${e.code}) while trying to ${context.action}; the run is not the skill's: ` +
        "start the engine (npm run setup) or point DOCKER_HOST at a running one, then retry",
      "engine-unreachable",
      { cause: error },
    );
  }
  if (e?.statusCode === 404 && /no such image/i.test(detail)) {
    return new SandboxUnavailableError(`the sandbox image ${context.image} is missing; build it with npm run setup`, "image-missing", {
      cause: error,
    });
  }
  if (e?.statusCode === 404 && /no such container/i.test(detail)) {
    return new SandboxUnavailableError(
      `the sandbox container was removed from outside while trying to ${context.action}; the run is not the skill's; retry`,
      "container-lost",
      { cause: error },
    );
  }
  if (e?.statusCode === 500 || e?.statusCode === 503) {
    return new SandboxUnavailableError(`the Docker engine failed to ${context.action}: ${detail}`, "engine-error", { cause: error });
  }
  return new InternalError(`Docker engine error while trying to ${context.action}: ${detail}`, {
    cause: error,
  });
}

function detailOf(e: DockerishError): string {
  return (e?.json?.message ?? e?.message ?? String(e)).trim();
}
