/**
 * The domain's error kinds. Every failure that crosses a layer boundary is one of these; adapters
 * translate their own failures into them in one place each (`fromDockerError`, `fromSqliteError`,
 * `fromQdrantError`), and `src/grpc/` alone maps a kind to the status a caller sees.
 */
export type ErrorKind =
  | "invalid-argument"
  | "not-found"
  | "already-exists"
  | "failed-precondition"
  | "permission-denied"
  | "unauthenticated"
  | "resource-exhausted"
  | "unavailable"
  | "conflict"
  | "cancelled"
  | "deadline-exceeded"
  | "internal";

/** The one error type that crosses layer boundaries; its `kind` says what went wrong, never how to answer it. */
export abstract class SkillEngineError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A request field (or a setting) is malformed; the message names the field and the reason. */
export class InvalidArgumentError extends SkillEngineError {
  constructor(
    readonly field: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super("invalid-argument", `${field}: ${reason}`, options);
  }
}

/** Something the caller named does not exist (or, for another agent's private skill, may not be seen). */
export class NotFoundError extends SkillEngineError {
  constructor(message: string) {
    super("not-found", message);
  }
}

/** No skill with that name is registered, or the caller may not see it: the two answers are the same on purpose. */
export class SkillNotFoundError extends NotFoundError {
  constructor(readonly skillName: string) {
    super(`no skill named "${skillName}" is registered`);
  }
}

/** The skill exists but has no such version. */
export class SkillVersionNotFoundError extends NotFoundError {
  constructor(
    readonly skillName: string,
    readonly version: number,
    readonly latestVersion?: number,
  ) {
    super(`"${skillName}" has no version ${version}${latestVersion === undefined ? "" : ` (latest is ${latestVersion})`}`);
  }
}

/** A name is taken by something the caller may not see or change. */
export class AlreadyExistsError extends SkillEngineError {
  constructor(message: string) {
    super("already-exists", message);
  }
}

/** The request is well formed but the state it needs does not hold (already deleted, not restorable, …). */
export class FailedPreconditionError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("failed-precondition", message, options);
  }
}

/** The TDD run of a registration failed; the message is the one-line cause. */
export class SkillTestFailedError extends FailedPreconditionError {
  constructor(
    readonly skillName: string,
    cause: string,
  ) {
    super(cause);
  }
}

/**
 * The TDD run failed because the code imports a module the sandbox does not have
 * (docs/packages.md#missing-modules); the message names the module and the field to declare it in.
 */
export class SkillModuleMissingError extends SkillTestFailedError {
  constructor(
    skillName: string,
    readonly module: string,
    cause: string,
  ) {
    super(skillName, cause);
  }
}

/**
 * A run needs a secret the agent it runs for has not set (docs/security.md#declaring-and-delivering):
 * answered before any container starts, and never counted against the skill.
 */
export class SecretMissingError extends FailedPreconditionError {
  constructor(
    readonly skillName: string,
    /** The declared names the agent has no value for, in declaration order. */
    readonly missing: readonly string[],
  ) {
    const [first, ...others] = missing;
    super(
      `skill ${skillName} needs secret ${first ?? "?"}: set it with SetSecret` +
        (others.length > 0 ? ` (and ${others.join(", ")}: set ${others.length === 1 ? "it" : "them"} too)` : ""),
    );
  }
}

/**
 * A version declares a host the operator's policy no longer allows (the policy was narrowed after it
 * was registered; docs/security.md#declaring-hosts): answered before any container starts, and never
 * counted against the skill.
 */
export class EgressNotAllowedError extends FailedPreconditionError {
  constructor(
    readonly skillName: string,
    /** The declared entry the policy does not cover, as stored. */
    readonly host: string,
  ) {
    super(
      `skill ${skillName} declares network_allow "${host}", which the operator's policy (SKILL_ENGINE_EGRESS_ALLOWED_HOSTS) ` +
        "no longer allows: the run was refused before it started; the operator may allow it again, or register a version without it",
    );
  }
}

/** The caller is known but may not do this (another agent's skill, an admin-only call). */
export class PermissionDeniedError extends SkillEngineError {
  constructor(
    readonly agentId: string,
    message: string,
  ) {
    super("permission-denied", message);
  }
}

/** The call carries no usable token. */
export class UnauthenticatedError extends SkillEngineError {
  constructor(message: string) {
    super("unauthenticated", message);
  }
}

/** A dependency (the Docker engine, an index backend, an embedder, a busy database) cannot serve now; retrying may help. */
export class UnavailableError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("unavailable", message, options);
  }
}

/**
 * What went wrong with a run when the fault is the infrastructure's, not the skill's
 * (docs/skill-lifecycle.md#what-counts-against-a-skill): such a run never touches a skill's counts,
 * window or routing credit.
 */
export type InfrastructureFault =
  /** The engine could not be reached, or it went away (stopped, restarted) during the run. */
  | "engine-unreachable"
  /** The engine answered with an error of its own. */
  | "engine-error"
  /** The sandbox image is not there. */
  | "image-missing"
  /** The run's container was killed or removed from outside (an engine shutdown, `docker kill`/`rm`). */
  | "container-lost"
  /** The sandbox directory was wiped while the run was being prepared or in flight. */
  | "sandbox-wiped"
  /** The disk under the sandbox directory is full (or read-only). */
  | "host-disk-full"
  /** The service is shutting down (a `RunCancelledError`; counted in the metrics under this name). */
  | "shutdown"
  /** No runner took the run within the dispatch wait: none connected, or all of them full (docs/execution-hosts.md). */
  | "no-runner"
  /** The runner that took the run went silent or away before answering (killed, cut off from the bus). */
  | "runner-lost"
  /** The message bus cannot be reached, or refused the run (too large for its max_payload). */
  | "bus-unreachable";

/**
 * The sandbox engine (Docker) or the sandbox's host cannot run the skill now: an infrastructure
 * fault, never the skill's. `fault` says which, for the caller's message and the metrics.
 */
export class SandboxUnavailableError extends UnavailableError {
  constructor(
    message: string,
    readonly fault: InfrastructureFault = "engine-unreachable",
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A limit of the service or its host is reached (the run queue, the disk). */
export class ResourceExhaustedError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("resource-exhausted", message, options);
  }
}

/** The run queue is full; the caller should retry later. */
export class QueueFullError extends ResourceExhaustedError {
  constructor(
    readonly running: number,
    readonly queued: number,
    message = `sandbox run queue is full (${running} running, ${queued} waiting); retry later`,
  ) {
    super(message);
  }
}

/**
 * One agent's share of the run queue is used up (docs/security.md#fair-share-of-the-run-queue): it has
 * as many runs waiting as it may (`limit`), or its newest waiting run gave way to a run of an agent with
 * fewer waiting (`displaced`). Only that agent hears it; the others' runs are not affected.
 */
export class AgentQueueFullError extends QueueFullError {
  constructor(
    readonly agentId: string,
    /** The agent's own runs waiting when it was refused. */
    readonly agentQueued: number,
    readonly reason: "limit" | "displaced",
    running: number,
    queued: number,
  ) {
    super(
      running,
      queued,
      reason === "limit"
        ? `sandbox run queue is full for agent ${agentId}: it has ${agentQueued} run${agentQueued === 1 ? "" : "s"} waiting, its limit ` +
            `(${running} running, ${queued} waiting in all); retry later`
        : `sandbox run queue is full: agent ${agentId} has the most runs waiting (${agentQueued}), so its newest ` +
            `gave way to another agent's run (${running} running, ${queued} waiting in all); retry later`,
    );
  }
}

/** A concurrent change got there first; reading again and retrying is the way out. */
export class ConflictError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("conflict", message, options);
  }
}

/** Why a run was stopped before it finished. */
export type CancellationReason = "cancelled" | "deadline" | "shutdown";

const CANCELLATION: Record<CancellationReason, { kind: ErrorKind; message: string }> = {
  cancelled: { kind: "cancelled", message: "the call was cancelled; the run was stopped" },
  deadline: { kind: "deadline-exceeded", message: "the call's deadline passed; the run was stopped" },
  shutdown: { kind: "unavailable", message: "the service is shutting down; the run was stopped" },
};

/** The caller cancelled, its deadline passed, or the service shut down before the run finished. */
export class RunCancelledError extends SkillEngineError {
  constructor(readonly reason: CancellationReason) {
    super(CANCELLATION[reason].kind, CANCELLATION[reason].message);
  }
}

/** Anything else: a bug or an unexpected environment failure. */
export class InternalError extends SkillEngineError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("internal", message, options);
  }
}
