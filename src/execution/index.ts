/**
 * The execution plane: single-use, hardened sandboxes for skill runs. The port (sandbox-runner.ts),
 * what every adapter's results mean (error-summary.ts) and how a plane is kept in service (probe,
 * orphan sweep, warm pool: engine-upkeep.ts) sit here; the adapters sit below it:
 * docker/ (the local Docker engine), nats/ (the bus), runner/ (the execution host program that
 * serves docker/ over nats/). Vocabulary: docs/execution-hosts.md#vocabulary. The only way in.
 */
export type {
  EngineHealth,
  ExecutionPlane,
  ExecutionResult,
  OutputFileLimits,
  PlaneGauges,
  RunInputFile,
  RunOutputFile,
  SandboxFile,
  SandboxFolderFile,
  SandboxEnvironment,
  SandboxLimits,
  SandboxRunner,
  SandboxRunRequest,
} from "./sandbox-runner.js";
export { runOutcome } from "./sandbox-runner.js";
export { EngineUpkeep, type EngineUpkeepOptions } from "./engine-upkeep.js";
export {
  DockerSandboxRunner,
  type DockerSandboxRunnerOptions,
  LABEL_INSTANCE,
  LABEL_MANAGED,
  LABEL_RUN_ID,
  LABEL_SKILL,
  localExecutionPlane,
  localSandboxImage,
  sandboxContainerSpec,
  SandboxImageInfo,
} from "./docker/index.js";
export { BusUnreachableError, connectToBus, NatsSandboxRunner, type NatsSandboxRunnerOptions, subjectsUnder } from "./nats/index.js";
export { type RunnerApp, runnerInstanceTag, startRunner } from "./runner/index.js";
