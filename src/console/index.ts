/** The operator console (docs/console.md): server-rendered pages over the control plane's use cases. The only way in. */
export { createConsole, type ConsoleOptions, type OperatorConsole } from "./console-server.js";
