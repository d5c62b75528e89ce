export { ConfigError, dockerConnection, loadConfig, loadConfigOrExplain, type SkillEngineConfig } from "./config.js";
