export { ConfigError, dockerConnection, loadConfig, type SkillEngineConfig } from "./config.js";
