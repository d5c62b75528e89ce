import { describe, expect, it } from "vitest";
import { DEFAULT_ENVIRONMENT_SETTINGS } from "../environments/index.js";
import { ConfigError, loadConfig } from "./load-config.js";

describe("loadConfig: environments (docs/packages.md)", () => {
  it("defaults to no package source, the host's apt sources, 300 s and 512 MiB a build", () => {
    expect(loadConfig({ HOME: "/home/agent" }).environments).toEqual(DEFAULT_ENVIRONMENT_SETTINGS);
    expect(DEFAULT_ENVIRONMENT_SETTINGS).toMatchObject({
      buildTimeoutMs: 300_000,
      maxBytes: 512 * 1024 * 1024,
      pipPython: "/usr/bin/python3",
    });
  });

  it("reads every setting", () => {
    const config = loadConfig({
      HOME: "/home/agent",
      SKILL_ENGINE_WHEELHOUSE: "/srv/wheels/../wheels",
      SKILL_ENGINE_PIP_PYTHON: "/opt/python/bin/python3",
      SKILL_ENGINE_APT_SOURCES: "/etc/skill-engine/sources.list",
      SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS: "60",
      SKILL_ENGINE_ENV_MAX_BYTES: "1048576",
      SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS: "0.5",
    });
    expect(config.environments).toEqual({
      pipIndexUrl: undefined,
      wheelhouse: "/srv/wheels",
      pipPython: "/opt/python/bin/python3",
      aptSourceList: "/etc/skill-engine/sources.list",
      buildTimeoutMs: 60_000,
      maxBytes: 1_048_576,
      unusedGraceMs: 1_800_000,
    });
    expect(loadConfig({ SKILL_ENGINE_PIP_INDEX_URL: "https://index.internal.example/simple/" }).environments.pipIndexUrl).toBe(
      "https://index.internal.example/simple/",
    );
  });

  it("refuses two package sources at once, and an index that is not an http(s) or file URL", () => {
    expect(() =>
      loadConfig({ SKILL_ENGINE_PIP_INDEX_URL: "https://index.internal.example/simple/", SKILL_ENGINE_WHEELHOUSE: "/srv/wheels" }),
    ).toThrow(/SKILL_ENGINE_PIP_INDEX_URL and SKILL_ENGINE_WHEELHOUSE are two package sources: set one/);
    expect(() => loadConfig({ SKILL_ENGINE_PIP_INDEX_URL: "ftp://index.internal.example/simple/" })).toThrow(ConfigError);
    expect(() => loadConfig({ SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS: "0" })).toThrow(ConfigError);
  });
});
