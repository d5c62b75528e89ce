export { type NatsSettings, type SkillEngineConfig } from "./config-options.js";
export { ConfigError, dockerConnection, loadConfig, loadConfigOrExplain } from "./load-config.js";
