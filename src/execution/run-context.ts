import type { Logger } from "pino";
import { SkillEngineError } from "../errors/index.js";
import { fromDockerError } from "./docker-errors.js";
import type { FinishContext } from "./finish-run.js";
import type { SandboxContainer } from "./sandbox-container.js";
import type { SandboxRunRequest } from "./sandbox-runner.js";

/** What the warm and the cold run strategies need from the runner that owns them. */
export interface RunStrategyContext extends FinishContext {
  readonly image: string;
  /** A new, started container running `request`'s skill on its payload. */
  prepareCold(request: SandboxRunRequest): Promise<SandboxContainer>;
  /** Removes a container and its run directory now. */
  destroy(member: SandboxContainer): Promise<void>;
  /** Removes a container and its run directory after the answer has gone out. */
  destroyLater(member: SandboxContainer): void;
}

/** The run's log lines carry its ids. */
export function runLogger(logger: Logger, runId: string, request: SandboxRunRequest, path: "warm" | "cold"): Logger {
  return logger.child({ runId, skill: request.skillName, purpose: request.purpose, warm: path === "warm" });
}

/** Domain errors pass through; anything else that went wrong around the run is the engine's. */
export function asRunFailure(error: unknown, image: string, action: string): SkillEngineError {
  return error instanceof SkillEngineError ? error : fromDockerError(error, { image, action });
}
