import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

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

  it("takes the host names the HTTP port answers to, beside localhost and IP addresses (docs/security.md#dns-rebinding)", () => {
    expect(loadConfig({ HOME: "/home/agent" }).httpAllowedHosts).toEqual([]);
    expect(
      loadConfig({ HOME: "/home/agent", SKILL_ENGINE_HTTP_ALLOWED_HOSTS: " Console.Example.com, skill_engine ,console.example.com," })
        .httpAllowedHosts,
    ).toEqual(["console.example.com", "skill_engine"]);
  });

  it("refuses an allowed host with a scheme or a port, naming every bad entry", () => {
    let error: unknown;
    try {
      loadConfig({
        HOME: "/home/agent",
        SKILL_ENGINE_HTTP_ALLOWED_HOSTS: "https://console.example.com,ok.example,console.example.com:443",
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      expect.stringContaining('SKILL_ENGINE_HTTP_ALLOWED_HOSTS: "https://console.example.com" is not a host name'),
      expect.stringContaining('SKILL_ENGINE_HTTP_ALLOWED_HOSTS: "console.example.com:443" is not a host name'),
    ]);
  });
});
