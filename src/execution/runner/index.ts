/** Execution hosts: the local Docker engine as an execution plane, and the runner program that serves it over the bus. The only way in. */
export { localExecutionPlane } from "./local-plane.js";
export { type RunnerApp, runnerInstanceTag, startRunner } from "./runner-app.js";
