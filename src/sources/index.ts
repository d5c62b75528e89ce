/**
 * Skill sources: `SKILL.md` folders found on disk, their canonical copies, hot reload and
 * progressive disclosure (docs/skill-sources.md). The only way in.
 */
export { type BundleLimits, DEFAULT_BUNDLE_LIMITS, packBundle, unpackBundle } from "./bundle-archive.js";
export { type ImportBundleInput, type ImportedBundle, plainSkillFolder, SkillBundles, type SkillBundlesOptions } from "./bundles.js";
export { type DiscoveredSkill, type DiscoveryOptions, type DiscoveryResult, discoverSkillFolders, type SourceStatus } from "./discovery.js";
export { DEFAULT_FOLDER_LIMITS, type FolderFile, type FolderLimits, type FolderVerdict, inspectSkillFolder } from "./folder-safety.js";
export { checkedSegments, type FolderContent, FolderStore, folderHash, readFolder } from "./folder-store.js";
export { CONTAINER_FOLDER_DIR, folderLauncher } from "./launcher.js";
export { readOrCreateSkillId, SKILL_ID_FILE, type SkillIdentity } from "./skill-identity.js";
export { MAX_DESCRIPTION_CHARS, parseSkillManifest, type SkillManifest, SkillManifestError } from "./skill-manifest.js";
export type { FolderSkillRegistrar } from "./folder-registrar.js";
export { FolderSkillReads } from "./folder-skill-reads.js";
export {
  type FolderFilesInput,
  type ScanReport,
  type SkillContent,
  SkillSources,
  type SkillSourcesOptions,
  type SourceEntry,
} from "./skill-sources.js";
export { mergeCatalog, sourceCatalogEntry, type SourcedCatalogEntry } from "./source-catalog.js";
export { sourcesPage } from "./source-pages.js";
export { SourceWatcher, type SourceWatcherOptions } from "./source-watcher.js";
export { type FolderSkillKind, SourceStore, type SourceVersion } from "./source-store.js";
