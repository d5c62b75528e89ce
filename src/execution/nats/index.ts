/**
 * The bus adapter (docs/execution-hosts.md): both ends of a run over NATS, the control plane's
 * NatsSandboxRunner and a runner's RunServer. The only way in.
 */
export { BusUnreachableError, connectToBus } from "./nats-connection.js";
export { NatsSandboxRunner, type NatsSandboxRunnerOptions } from "./nats-sandbox-runner.js";
export { RunServer, type RunServerOptions } from "./run-server.js";
export { subjectsUnder, type Subjects } from "./subjects.js";
export type { RunnerStatus } from "./wire.js";
