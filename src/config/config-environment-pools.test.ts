import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "./load-config.js";

/** Warm pools of environments (docs/packages.md#warm-containers-of-an-environment). */
describe("loadConfig: environments' warm pools", () => {
  it("keeps up to 4 environments' pools of 1 container each by default, none when the warm pool is off", () => {
    const config = loadConfig({ HOME: "/home/agent" });
    expect(config.environmentWarmPools).toBe(4);
    expect(config.environmentPoolSize).toBe(1);
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_POOL: "off" }).environmentWarmPools).toBe(0);
  });

  it("reads both settings, 0 pools turning them off, and refuses values out of range", () => {
    const config = loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENV_WARM_POOLS: "8", SKILL_ENGINE_ENV_POOL_SIZE: "2" });
    expect([config.environmentWarmPools, config.environmentPoolSize]).toEqual([8, 2]);
    expect(loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENV_WARM_POOLS: "0" }).environmentWarmPools).toBe(0);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENV_WARM_POOLS: "65" })).toThrow(ConfigError);
    expect(() => loadConfig({ HOME: "/home/agent", SKILL_ENGINE_ENV_POOL_SIZE: "0" })).toThrow(ConfigError);
  });
});
