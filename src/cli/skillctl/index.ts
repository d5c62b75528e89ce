/** skillctl: its commands and their output, importable without side effects. The only way in. */
export type { Io } from "./format.js";
export { main } from "./main.js";
/** The connection settings skillctl reads, shared with the MCP stdio bin (src/cli/skill-engine-mcp.ts). */
export { type GlobalOptions, type TlsMode, type TokenSource, UsageError } from "./args.js";
export { channelCredentials, resolveToken, transportWarnings } from "./credentials.js";
