import type { Logger } from "pino";
import type { CanonicalStore } from "./canonical-store.js";
import { contentHash } from "./content-hash.js";
import type { SkillRegistry } from "./skill-registry.js";

/** What start-up reconciliation found and repaired. */
export interface ReconcileReport {
  /** Active files rewritten from `.versions/` because they were missing or did not match the registry. */
  readonly restoredActive: string[];
  /** Active files the registry does not know, moved to `.orphans/`. */
  readonly orphansMovedAside: string[];
  /** Version files of registrations that never committed (a crash mid-registration), removed. */
  readonly uncommittedVersionsRemoved: string[];
  /** Skills whose code could not be found anywhere: registry rows with no usable file. */
  readonly unrecoverable: string[];
  readonly tempFilesRemoved: number;
  /** True when the registry is empty but the directory has skills: left untouched for a rebuild. */
  readonly registryEmptyButStorePopulated: boolean;
}

/**
 * Makes the canonical directory agree with the registry after a crash. Registration writes
 * `.versions/<name>/<n>.py`, then commits the row, then writes `<name>.py`; so a crash leaves
 * either an uncommitted version file (removed: the caller never got an answer) or a committed
 * row whose active file is stale (restored from the version file).
 */
export async function reconcile(registry: SkillRegistry, store: CanonicalStore, logger: Logger, now = new Date()): Promise<ReconcileReport> {
  const tempFilesRemoved = await store.removeStaleTempFiles();
  const skills = registry.list();
  const activeNames = await store.activeNames();
  if (skills.length === 0 && activeNames.length > 0) {
    logger.warn(
      { skills: activeNames.length, directory: store.directory },
      "the registry is empty but the canonical store holds skills; leaving them untouched for a rebuild",
    );
    return {
      restoredActive: [],
      orphansMovedAside: [],
      uncommittedVersionsRemoved: [],
      unrecoverable: [],
      tempFilesRemoved,
      registryEmptyButStorePopulated: true,
    };
  }

  const known = new Map(skills.map((s) => [s.name, s]));
  const restoredActive: string[] = [];
  const unrecoverable: string[] = [];
  for (const skill of skills) {
    const active = await store.readActive(skill.name);
    if (active !== undefined && contentHash(active) === skill.contentHash) continue;
    const fromHistory = await store.readVersion(skill.name, skill.version);
    if (fromHistory !== undefined && contentHash(fromHistory) === skill.contentHash) {
      await store.writeActive(skill.name, fromHistory);
      restoredActive.push(skill.name);
    } else {
      unrecoverable.push(skill.name);
    }
  }

  const orphansMovedAside: string[] = [];
  for (const name of activeNames) {
    if (known.has(name)) continue;
    const movedTo = await store.moveOrphanAside(name, now);
    orphansMovedAside.push(movedTo);
  }

  const uncommittedVersionsRemoved: string[] = [];
  for (const { name, version } of await store.versionFiles()) {
    const committedUpTo = known.get(name) ? registry.nextVersion(name) - 1 : 0;
    if (version > committedUpTo) {
      await store.removeVersion(name, version);
      uncommittedVersionsRemoved.push(`${name}@${version}`);
    }
  }

  const report = {
    restoredActive,
    orphansMovedAside,
    uncommittedVersionsRemoved,
    unrecoverable,
    tempFilesRemoved,
    registryEmptyButStorePopulated: false,
  };
  const repaired =
    restoredActive.length + orphansMovedAside.length + uncommittedVersionsRemoved.length + tempFilesRemoved;
  if (unrecoverable.length > 0) logger.error({ unrecoverable }, "registered skills whose code is missing from the canonical store");
  if (repaired > 0) logger.warn(report, "reconciled the canonical store with the registry");
  else logger.info("registry and canonical store agree");
  return report;
}
