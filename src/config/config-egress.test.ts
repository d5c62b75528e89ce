import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** The egress settings (docs/security.md#egress, docs/operations.md#configuration). */
describe("loadConfig: egress", () => {
  it("allows no host, maps none, and limits each run to 32 connections, 16 MiB and 10 s to connect by default", () => {
    const { egress } = loadConfig({ HOME: "/home/agent" });
    expect(egress.allowedHosts).toEqual([]);
    expect(egress.hostMap.size).toBe(0);
    expect(egress.limits).toEqual({ maxConnections: 32, maxBytes: 16 * 1024 * 1024, connectTimeoutMs: 10_000 });
  });

  it("reads the policy, the host map and the limits", () => {
    const { egress } = loadConfig({
      HOME: "/home/agent",
      SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: " api.example.com , *.svc.example.org:8443,,10.0.0.1",
      SKILL_ENGINE_EGRESS_HOST_MAP: "api.example.com=127.0.0.1:8080",
      SKILL_ENGINE_EGRESS_MAX_CONNECTIONS: "4",
      SKILL_ENGINE_EGRESS_MAX_BYTES: "65536",
      SKILL_ENGINE_EGRESS_CONNECT_TIMEOUT_MS: "2500",
    });
    expect(egress.allowedHosts.map((p) => [p.host, p.wildcard, p.literal, p.port])).toEqual([
      ["api.example.com", false, false, undefined],
      ["svc.example.org", true, false, 8443],
      ["10.0.0.1", false, true, undefined],
    ]);
    expect(egress.hostMap.get("api.example.com")).toEqual({ address: "127.0.0.1", port: 8080 });
    expect(egress.limits).toEqual({ maxConnections: 4, maxBytes: 65536, connectTimeoutMs: 2500 });
  });

  it("stops the start on a malformed policy entry, host map or limit, listing each", () => {
    const problems = (env: Record<string, string>): readonly string[] => {
      try {
        loadConfig({ HOME: "/home/agent", ...env });
      } catch (error) {
        expect(error).toBeInstanceOf(ConfigError);
        return (error as ConfigError).problems;
      }
      return [];
    };
    expect(
      problems({
        SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: "api.example.com,https://x.example.com",
        SKILL_ENGINE_EGRESS_HOST_MAP: "api.example.com=not-an-address",
      }),
    ).toEqual([
      'SKILL_ENGINE_EGRESS_ALLOWED_HOSTS: "https://x.example.com" must be a host, host:port or *.domain, not a URL',
      'SKILL_ENGINE_EGRESS_HOST_MAP entry "api.example.com=not-an-address" must map to an IP address, optionally with a port',
    ]);
    expect(problems({ SKILL_ENGINE_EGRESS_MAX_CONNECTIONS: "0" })).toEqual([
      expect.stringMatching(/^SKILL_ENGINE_EGRESS_MAX_CONNECTIONS: /),
    ]);
  });
});
