/** Execution over a message bus (docs/execution-hosts.md): the control plane's dispatcher and the runner's server. The only way in. */
export { BusUnreachableError, connectToBus } from "./nats-connection.js";
export { NatsSandboxRunner, type NatsSandboxRunnerOptions } from "./nats-sandbox-runner.js";
export { RunServer, type RunServerOptions } from "./run-server.js";
export { subjectsUnder, type Subjects } from "./subjects.js";
export type { RunnerStatus } from "./wire.js";
