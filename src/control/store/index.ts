/** The canonical store: skill files outside every sandbox, their history, and the registry's mirror. The only way in. */
export { fsyncDirectory, type PreparedFile, prepareFileAtomic, TEMP_FILE_PREFIX, writeFileAtomic } from "./atomic-file.js";
export { CoalescedWrites } from "./coalesced-writes.js";
export { fromStoreError } from "./store-errors.js";
export { CanonicalStore, locationOf, type StagedVersion, type StoreLocation, STORE_LOCATIONS } from "./canonical-store.js";
export { contentHash } from "./content-hash.js";
export {
  MIRROR_FORMAT,
  type MirrorDocument,
  MirrorDocumentSchema,
  type MirrorEntry,
  MirrorEntrySchema,
  type MirrorReading,
  readMirrorDocument,
  type RecordedSkill,
  type RecordedVersion,
  toMirrorEntry,
} from "./mirror-format.js";
export { LEGACY_MIRROR_FILE, MIRROR_DIR, MirrorFiles, type MirrorFilesReading, mirrorFileLabel } from "./mirror-files.js";
export { MirrorWriter } from "./mirror-writer.js";
export { pathExists } from "./path-exists.js";
export { type StoredTestFile, testFileEntry, type TestFilesReading } from "./version-test-files.js";
