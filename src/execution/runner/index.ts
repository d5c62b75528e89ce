/**
 * The runner (docs/execution-hosts.md): the execution host program that serves the local Docker
 * adapter over the bus. The only way in.
 */
export { type RunnerApp, runnerInstanceTag, startRunner } from "./runner-app.js";
