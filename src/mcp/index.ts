/** The MCP door (docs/mcp.md): one MCP server over the skillengine.v1 API, for the stdio bin and the HTTP door. The only way in. */
export { EngineClient, type CallScope, type EngineClientOptions } from "./engine-client.js";
export { createMcpServer, type McpServerOptions, type McpToolsMode, type RequestExtra, type SkillEngineMcpServer } from "./mcp-server.js";
export { startMcpHttpDoor, type McpHttpDoorOptions, type RunningMcpHttpDoor } from "./http-door.js";
export { META_TOOLS } from "./meta-tools.js";
