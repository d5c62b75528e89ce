/** skillctl: its commands and their output, importable without side effects. The only way in. */
export type { Io } from "./format.js";
export { main } from "./main.js";
