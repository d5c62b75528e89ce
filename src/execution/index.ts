/** The execution plane: single-use, hardened sandboxes for skill runs. The only way in. */
export type {
  EngineHealth,
  ExecutionResult,
  SandboxLimits,
  SandboxRunner,
  SandboxRunRequest,
} from "./sandbox-runner.js";
export { DockerSandboxRunner, LABEL_INSTANCE, LABEL_MANAGED, SANDBOX_USER } from "./docker-sandbox-runner.js";
export type { DockerSandboxRunnerOptions } from "./docker-sandbox-runner.js";
