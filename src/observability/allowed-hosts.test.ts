import { describe, expect, it } from "vitest";
import { HostAllowList } from "./allowed-hosts.js";

describe("HostAllowList (docs/security.md#dns-rebinding)", () => {
  const loopbackOnly = new HostAllowList();
  const withNames = new HostAllowList(["console.example.com", "Skill-Engine"]);

  it("accepts localhost and IP addresses, with or without a port", () => {
    for (const host of [
      "localhost",
      "localhost:9464",
      "LOCALHOST.:9464",
      "127.0.0.1",
      "127.0.0.1:9464",
      "[::1]",
      "[::1]:9464",
      "10.1.2.3:9464",
    ]) {
      expect(loopbackOnly.allowsHost(host), host).toBe(true);
    }
  });

  it("refuses any other name, a missing Host, and anything a URL parser could read as more than a host", () => {
    for (const host of [
      undefined,
      "",
      "attacker.example",
      "attacker.example:9464",
      "localhost.attacker.example",
      "127.0.0.1.nip.io:9464",
      "attacker.example@127.0.0.1",
      "127.0.0.1/x",
      "[::1",
    ]) {
      expect(loopbackOnly.allowsHost(host), String(host)).toBe(false);
    }
  });

  it("accepts the configured names, case-insensitively, on any port", () => {
    expect(withNames.allowsHost("console.example.com")).toBe(true);
    expect(withNames.allowsHost("CONSOLE.example.com:443")).toBe(true);
    expect(withNames.allowsHost("skill-engine:9464")).toBe(true);
    expect(withNames.allowsHost("example.com")).toBe(false);
    // The refusal states the rule without naming the configured hosts to a stranger.
    expect(withNames.describe()).not.toContain("console.example.com");
  });

  it("takes an Origin of http or https naming an accepted host, never one naming another", () => {
    expect(withNames.allowsOrigin("http://127.0.0.1:9464")).toBe(true);
    expect(withNames.allowsOrigin("https://console.example.com")).toBe(true);
    expect(withNames.allowsOrigin("http://localhost:9464")).toBe(true);
    expect(withNames.allowsOrigin("http://attacker.example:9464")).toBe(false);
    expect(withNames.allowsOrigin("null")).toBe(false);
    expect(withNames.allowsOrigin("file://")).toBe(false);
    expect(withNames.allowsOrigin("http://console.example.com.attacker.example")).toBe(false);
  });
});
