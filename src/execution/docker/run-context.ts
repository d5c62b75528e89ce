import type { Logger } from "pino";
import { SkillEngineError } from "../../errors/index.js";
import { fromDockerError } from "./docker-errors.js";
import type { FinishContext } from "./finish-run.js";
import type { EgressSettings } from "./run-egress.js";
import type { SandboxContainer } from "./sandbox-container.js";
import type { SandboxRunRequest } from "../sandbox-runner.js";

/** What the warm and the cold run strategies need from the sandbox runner that owns them. */
export interface RunStrategyContext extends FinishContext {
  readonly image: string;
  /** The way out for runs that declared hosts (docs/security.md#egress). */
  readonly egress?: EgressSettings;
  /** A new, started container running `request`'s skill on its payload. */
  prepareCold(request: SandboxRunRequest): Promise<SandboxContainer>;
  /**
   * Queues a container and its run directory for removal in the background; resolves once queued
   * (at once, unless the removal queue is full: docs/performance.md#container-removal).
   */
  destroyLater(member: SandboxContainer): Promise<void>;
}

/** The run's log lines carry its ids. */
export function runLogger(logger: Logger, runId: string, request: SandboxRunRequest, path: "warm" | "cold"): Logger {
  return logger.child({ runId, skill: request.skillName, purpose: request.purpose, agent: request.agentId, warm: path === "warm" });
}

/** Domain errors pass through; anything else that went wrong around the run is the engine's. */
export function asRunFailure(error: unknown, image: string, action: string): SkillEngineError {
  return error instanceof SkillEngineError ? error : fromDockerError(error, { image, action });
}
