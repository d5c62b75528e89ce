/**
 * Skill sources: `SKILL.md` folders found on disk (docs/skill-sources.md). Discovery, identity and
 * the safety check; wiring them into the registry, routing and the RPCs is the next step. The only
 * way in.
 */
export { type DiscoveredSkill, type DiscoveryOptions, type DiscoveryResult, discoverSkillFolders, type SourceStatus } from "./discovery.js";
export { DEFAULT_FOLDER_LIMITS, type FolderFile, type FolderLimits, type FolderVerdict, inspectSkillFolder } from "./folder-safety.js";
export { readOrCreateSkillId, SKILL_ID_FILE, type SkillIdentity } from "./skill-identity.js";
export { MAX_DESCRIPTION_CHARS, parseSkillManifest, type SkillManifest, SkillManifestError } from "./skill-manifest.js";
