import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./config.js";

/** The operator console's switch (docs/console.md#enabling-it). */
describe("loadConfig: console", () => {
  it("is off by default and on with SKILL_ENGINE_CONSOLE=on", () => {
    expect(loadConfig({ HOME: "/home/agent" }).console).toBe(false);
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_CONSOLE: "on" }).console).toBe(true);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_CONSOLE: "yes" })).toThrow(ConfigError);
  });

  it("needs the metrics port it is served on", () => {
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_CONSOLE: "on", SKILL_ENGINE_METRICS: "off" })).toThrow(
      /SKILL_ENGINE_CONSOLE=on needs the HTTP port/,
    );
  });
});
