import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** Settings of the serving side: TLS on the gRPC port, engine probing, shutdown grace. */
describe("loadConfig: TLS, engine probe, shutdown grace", () => {
  it("plaintext, a 15 s probe and a 15 s grace by default", () => {
    const config = loadConfig({ HOME: "/home/agent" });
    expect(config.tls).toBeUndefined();
    expect(config.engineProbeMs).toBe(15_000);
    expect(config.shutdownGraceMs).toBe(15_000);
  });

  it("TLS takes a certificate and a key together, resolved to absolute paths", () => {
    const config = loadConfig({ HOME: "/home/agent", SKILL_ENGINE_TLS_CERT: "/etc/se/tls.crt", SKILL_ENGINE_TLS_KEY: "tls.key" });
    expect(config.tls).toEqual({ certFile: "/etc/se/tls.crt", keyFile: `${process.cwd()}/tls.key` });
  });

  it("a certificate without a key, or a key without a certificate, is refused", () => {
    for (const half of [{ SKILL_ENGINE_TLS_CERT: "/etc/se/tls.crt" }, { SKILL_ENGINE_TLS_KEY: "/etc/se/tls.key" }]) {
      expect(() => loadConfig({ HOME: "/home/agent", ...half })).toThrow(ConfigError);
      expect(() => loadConfig({ HOME: "/home/agent", ...half })).toThrow(/SKILL_ENGINE_TLS_CERT and SKILL_ENGINE_TLS_KEY go together/);
    }
    // An empty variable counts as unset.
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_TLS_CERT: "", SKILL_ENGINE_TLS_KEY: "" }).tls).toBeUndefined();
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_TLS_CERT: "/etc/se/tls.crt", SKILL_ENGINE_TLS_KEY: "" })).toThrow(
      ConfigError,
    );
  });

  it("reads the probe interval in ms and the grace in (fractional) seconds, within bounds", () => {
    const config = loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENGINE_PROBE_MS: "200", SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "2.5" });
    expect(config.engineProbeMs).toBe(200);
    expect(config.shutdownGraceMs).toBe(2_500);
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "0" }).shutdownGraceMs).toBe(0);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENGINE_PROBE_MS: "50" })).toThrow(/SKILL_ENGINE_ENGINE_PROBE_MS/);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS: "-1" })).toThrow(
      /SKILL_ENGINE_SHUTDOWN_GRACE_SECONDS/,
    );
  });
});
