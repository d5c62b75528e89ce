import type { Logger } from "pino";
import type { SkillRegistry } from "../registry/index.js";
import { type CanonicalStore, contentHash, locationOf, STORE_LOCATIONS } from "../store/index.js";

/** What start-up reconciliation found and repaired. */
export interface ReconcileReport {
  /** Skills whose files were in another location than their status says (a crash mid-move), moved. */
  readonly relocated: string[];
  /** Active files rewritten from history because they were missing or did not match the registry. */
  readonly restoredActive: string[];
  /** Active files the registry does not know, moved to `.orphans/`. */
  readonly orphansMovedAside: string[];
  /**
   * History files of committed versions put back from their staged temp file (`name@version`): a
   * host crash lost the rename that follows the commit (docs/performance.md#what-a-crash-can-lose).
   */
  readonly historyRestoredFromStaging: string[];
  /** Version files of registrations that never committed (a crash mid-registration), removed. */
  readonly uncommittedVersionsRemoved: string[];
  /** Skills whose code could not be found anywhere: registry rows with no usable file. */
  readonly unrecoverable: string[];
  readonly tempFilesRemoved: number;
  /** True when the registry is empty but the directory has skills: left untouched for a rebuild. */
  readonly registryEmptyButStorePopulated: boolean;
}

/**
 * Makes the canonical directory agree with the registry after a crash.
 *
 * Every change commits the registry first and moves or writes files after, except a new
 * version's history file, which is written before its commit. So a crash leaves either an
 * uncommitted version file (removed: the caller never got an answer), files still in the location
 * of the previous status (moved), or a stale active file (restored from history).
 */
export async function reconcile(
  registry: SkillRegistry,
  store: CanonicalStore,
  logger: Logger,
  now = new Date(),
): Promise<ReconcileReport> {
  const historyRestoredFromStaging = await restoreStagedHistory(registry, store);
  const tempFilesRemoved = await store.removeStaleTempFiles();
  // Names, statuses and hashes only, and one listing of each location: at 100,000 skills a record
  // and a few file lookups per skill made this most of a minute (docs/performance.md#start-up).
  const skills = registry.fileStates();
  if (skills.length === 0) {
    const populated = (await Promise.all(STORE_LOCATIONS.map((l) => store.activeNames(l)))).some((names) => names.length > 0);
    if (populated) {
      logger.warn(
        { directory: store.directory },
        "the registry is empty but the canonical store holds skills; leaving them untouched: stop the service and run npm run rebuild-registry",
      );
      return emptyReport(tempFilesRemoved, true, historyRestoredFromStaging);
    }
  }

  const relocated: string[] = [];
  const restoredActive: string[] = [];
  const unrecoverable: string[] = [];
  const present = store.presence();
  for (const skill of skills) {
    const expected = locationOf(skill.status);
    for (const location of STORE_LOCATIONS) {
      const here = present.get(location);
      if (location === expected || !(here?.active.has(skill.name) || here?.history.has(skill.name))) continue;
      await store.moveSkill(skill.name, location, expected, now);
      relocated.push(`${skill.name}: ${location} → ${expected}`);
    }
    const active = store.readActiveNow(skill.name, expected);
    if (active !== undefined && contentHash(active) === skill.contentHash) continue;
    const fromHistory = await store.readVersion(skill.name, skill.version, expected);
    if (fromHistory !== undefined && contentHash(fromHistory) === skill.contentHash) {
      await store.writeActive(skill.name, fromHistory, expected);
      restoredActive.push(skill.name);
    } else {
      unrecoverable.push(skill.name);
    }
  }

  const known = new Map(skills.map((s) => [s.name, s]));
  const orphansMovedAside: string[] = [];
  const uncommittedVersionsRemoved: string[] = [];
  for (const location of STORE_LOCATIONS) {
    for (const name of await store.activeNames(location)) {
      const skill = known.get(name);
      if (skill && locationOf(skill.status) === location) continue;
      orphansMovedAside.push(await store.moveOrphanAside(name, now, location));
    }
    for (const { name, version } of await store.versionFiles(location)) {
      const skill = known.get(name);
      if (skill && version <= skill.latestVersion) continue;
      await store.removeVersion(name, version, location);
      uncommittedVersionsRemoved.push(`${name}@${version}`);
    }
  }

  const report: ReconcileReport = {
    historyRestoredFromStaging,
    relocated,
    restoredActive,
    orphansMovedAside,
    uncommittedVersionsRemoved,
    unrecoverable,
    tempFilesRemoved,
    registryEmptyButStorePopulated: false,
  };
  const repaired =
    historyRestoredFromStaging.length +
    relocated.length +
    restoredActive.length +
    orphansMovedAside.length +
    uncommittedVersionsRemoved.length +
    tempFilesRemoved;
  if (unrecoverable.length > 0) logger.error({ unrecoverable }, "registered skills whose code is missing from the canonical store");
  if (repaired > 0) logger.warn(report, "reconciled the canonical store with the registry");
  else logger.info("registry and canonical store agree");
  return report;
}

/**
 * A committed version whose history file is missing while a staged temp file holds its exact code
 * (same content hash): the rename after the commit was lost with the host, so the file is written
 * back under its number before temp files are removed.
 */
async function restoreStagedHistory(registry: SkillRegistry, store: CanonicalStore): Promise<string[]> {
  const restored: string[] = [];
  for (const staged of await store.stagedVersions()) {
    const skill = registry.get(staged.name);
    if (!skill) continue;
    const location = locationOf(skill.status);
    const hash = contentHash(staged.code);
    for (const version of registry.versions(staged.name)) {
      if (version.contentHash !== hash) continue;
      if ((await store.readVersion(staged.name, version.version, location)) !== undefined) continue;
      await store.restoreVersion(staged.name, version.version, staged.code, location);
      restored.push(`${staged.name}@${version.version}`);
    }
  }
  return restored;
}

function emptyReport(
  tempFilesRemoved: number,
  registryEmptyButStorePopulated: boolean,
  historyRestoredFromStaging: string[] = [],
): ReconcileReport {
  return {
    historyRestoredFromStaging,
    relocated: [],
    restoredActive: [],
    orphansMovedAside: [],
    uncommittedVersionsRemoved: [],
    unrecoverable: [],
    tempFilesRemoved,
    registryEmptyButStorePopulated,
  };
}
