/** What both entry points (src/main.ts, src/runner-main.ts) share: signals, shutdown and start failures. The only way in. */
export { exitOnStartFailure, handleShutdownSignals, type ShutdownSignalsOptions, type Stoppable } from "./shutdown-signals.js";
