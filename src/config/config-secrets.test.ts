import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** SKILL_ENGINE_SECRETS_KEY_FILE (docs/security.md#the-store). */
describe("loadConfig: the secrets key file", () => {
  it("is secrets.key in SKILL_ENGINE_HOME by default, and any absolute or relative path when set", () => {
    expect(loadConfig({ HOME: "/home/agent" }).secretsKeyFile).toBe("/home/agent/.local/share/skill-engine/secrets.key");
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_HOME: "/srv/se" }).secretsKeyFile).toBe("/srv/se/secrets.key");
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_SECRETS_KEY_FILE: "/run/keys/se.key" }).secretsKeyFile).toBe("/run/keys/se.key");
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_SECRETS_KEY_FILE: "se.key" }).secretsKeyFile).toBe(`${process.cwd()}/se.key`);
  });

  it("is refused inside anything a run can read: the sandbox dir, environments/", () => {
    const base = {
      HOME: "/home/agent",
      SKILL_ENGINE_HOME: "/srv/se",
      SKILL_ENGINE_SANDBOX_DIR: "/srv/sandbox",
    };
    for (const inside of ["/srv/sandbox/runs/k.key", "/srv/se/environments/k.key"]) {
      expect(() => loadConfig({ ...base, SKILL_ENGINE_SECRETS_KEY_FILE: inside })).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, SKILL_ENGINE_SECRETS_KEY_FILE: inside })).toThrow(
        /SKILL_ENGINE_SECRETS_KEY_FILE .* must not be inside/,
      );
    }
  });
});
