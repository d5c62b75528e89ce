/**
 * The local Docker adapter of the sandbox-runner port: the engine client, the hardening spec, the warm
 * and cold run strategies, the warm pool, the run queue and the run directories. The only way in.
 */
export { LABEL_INSTANCE, LABEL_MANAGED, LABEL_RUN_ID, LABEL_SKILL, sandboxContainerSpec } from "./container-spec.js";
export { DockerSandboxRunner, type DockerSandboxRunnerOptions } from "./docker-sandbox-runner.js";
export { localExecutionPlane, localSandboxImage } from "./local-plane.js";
export { SandboxImageInfo } from "./sandbox-image-info.js";
