/** The execution plane: single-use, hardened sandboxes for skill runs. The only way in. */
export type {
  EngineHealth,
  ExecutionPlane,
  ExecutionResult,
  SandboxFile,
  SandboxFolderFile,
  SandboxLimits,
  RunnerGauges,
  SandboxRunner,
  SandboxRunRequest,
} from "./sandbox-runner.js";
export { runOutcome } from "./sandbox-runner.js";
export { LABEL_INSTANCE, LABEL_MANAGED, LABEL_SKILL, SANDBOX_USER, sandboxContainerSpec } from "./container-spec.js";
export { DockerSandboxRunner, type DockerSandboxRunnerOptions } from "./docker-sandbox-runner.js";
export { cancellationOf } from "./run-queue.js";
