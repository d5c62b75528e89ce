import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** Where runs execute, and the bus (docs/execution-hosts.md#the-bus). */
describe("loadConfig: execution hosts", () => {
  it("runs locally by default, with the bus settings' defaults ready for a runner", () => {
    const config = loadConfig({ HOME: "/home/agent" });
    expect(config.execution).toBe("local");
    expect(config.nats).toEqual({
      servers: ["nats://127.0.0.1:4222"],
      credsFile: undefined,
      token: undefined,
      user: undefined,
      password: undefined,
      tls: undefined,
      subjectPrefix: "skillengine",
      heartbeatMs: 1000,
      dispatchWaitMs: 10_000,
    });
    expect(config.runnerId).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it("reads a cluster, credentials, TLS files and a runner id", () => {
    const config = loadConfig({
      HOME: "/home/agent",
      SKILL_ENGINE_EXECUTION: "nats",
      SKILL_ENGINE_NATS_URL: "nats://a:4222, tls://b:4222",
      SKILL_ENGINE_NATS_USER: "plane",
      SKILL_ENGINE_NATS_PASSWORD: "secret",
      SKILL_ENGINE_NATS_TLS_CA: "/etc/ca.pem",
      SKILL_ENGINE_NATS_SUBJECT_PREFIX: "team-a.skills",
      SKILL_ENGINE_RUNNER_ID: "host-b",
    });
    expect(config.execution).toBe("nats");
    expect(config.nats).toMatchObject({
      servers: ["nats://a:4222", "tls://b:4222"],
      user: "plane",
      password: "secret",
      tls: { caFile: "/etc/ca.pem", certFile: undefined, keyFile: undefined },
      subjectPrefix: "team-a.skills",
    });
    expect(config.runnerId).toBe("host-b");
  });

  it("refuses what cannot work, naming each problem", () => {
    const problems = (env: Record<string, string>): string[] => {
      try {
        loadConfig({ HOME: "/home/agent", ...env });
        return [];
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        return [...error.problems];
      }
    };
    expect(problems({ SKILL_ENGINE_EXECUTION: "kubernetes" })).toHaveLength(1);
    expect(problems({ SKILL_ENGINE_NATS_URL: "http://bus:4222" })).toEqual([expect.stringMatching(/SKILL_ENGINE_NATS_URL/)]);
    expect(problems({ SKILL_ENGINE_NATS_USER: "only-user" })).toEqual([
      expect.stringMatching(/USER and SKILL_ENGINE_NATS_PASSWORD go together/),
    ]);
    expect(problems({ SKILL_ENGINE_NATS_TLS_CERT: "/c.pem" })).toEqual([
      expect.stringMatching(/TLS_CERT and SKILL_ENGINE_NATS_TLS_KEY go together/),
    ]);
    expect(problems({ SKILL_ENGINE_NATS_SUBJECT_PREFIX: "a.*" })).toEqual([expect.stringMatching(/SUBJECT_PREFIX/)]);
    expect(problems({ SKILL_ENGINE_RUNNER_ID: "host b" })).toEqual([expect.stringMatching(/SKILL_ENGINE_RUNNER_ID/)]);
  });
});
