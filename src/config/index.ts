export { ConfigError, dockerConnection, loadConfig, loadConfigOrExplain, type NatsSettings, type SkillEngineConfig } from "./config.js";
