import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** The MCP door's settings (docs/mcp.md#streamable-http). */
describe("loadConfig: the MCP door", () => {
  it("is off unless a port is set", () => {
    expect(loadConfig({ HOME: "/home/agent" }).mcp).toBeUndefined();
  });

  it("listens on 127.0.0.1 with the meta tools and a 5 s poll by default", () => {
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_MCP_PORT: "0" }).mcp).toEqual({
      host: "127.0.0.1",
      port: 0,
      tools: "meta",
      pollMs: 5_000,
    });
  });

  it("takes a host, a tools mode and a poll interval, and refuses what is out of range", () => {
    const config = loadConfig({
      HOME: "/home/agent",
      SKILL_ENGINE_MCP_PORT: "8765",
      SKILL_ENGINE_MCP_HOST: "0.0.0.0",
      SKILL_ENGINE_MCP_TOOLS: "both",
      SKILL_ENGINE_MCP_POLL_SECONDS: "0.5",
    });
    expect(config.mcp).toEqual({ host: "0.0.0.0", port: 8765, tools: "both", pollMs: 500 });
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_MCP_PORT: "70000" })).toThrow(ConfigError);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_MCP_PORT: "1", SKILL_ENGINE_MCP_TOOLS: "all" })).toThrow(
      /SKILL_ENGINE_MCP_TOOLS/,
    );
  });
});
