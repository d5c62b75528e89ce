import { mkdir, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import Database from "better-sqlite3";
import type { Logger } from "pino";
import { errorMessage, FailedPreconditionError } from "../../errors/index.js";
import { LOCAL_AGENT } from "../../identity/index.js";
import { SKILL_NAME_PATTERN } from "../intake/index.js";
import {
  type HealthPolicy,
  type ImportedSkill,
  isLive,
  REGISTRY_FILE,
  SkillRegistry,
  type SkillStatus,
  type VersionRecord,
} from "../registry/index.js";
import {
  CanonicalStore,
  contentHash,
  fsyncDirectory,
  locationOf,
  MIRROR_DIR,
  type MirrorFilesReading,
  mirrorFileLabel,
  pathExists,
  readMirrorDocument,
  type RecordedSkill,
  type StoreLocation,
  STORE_LOCATIONS,
  writeFileAtomic,
} from "../store/index.js";
import { checkedTestFiles } from "./rebuild-test-files.js";

const DEFAULT_SCHEMA = '{"type":"object"}';
const DEFAULT_TEST_PAYLOAD = "{}";
const SQLITE_SIDE_FILES = ["", "-wal", "-shm"] as const;

export interface RebuildOptions {
  /** `$SKILL_ENGINE_HOME`: holds `registry.db` and `memory/acquired_skills/`. */
  readonly home: string;
  readonly policy: HealthPolicy;
  readonly logger: Logger;
  /**
   * Rebuild even though `registry.db` holds skills (or cannot be read). The old file and its
   * `-wal`/`-shm` are moved aside to `registry.db.bak-<timestamp>`, never deleted.
   * @default false
   */
  readonly force?: boolean;
  /** @default new Date() */
  readonly now?: Date;
}

export interface RebuiltSkill {
  readonly name: string;
  readonly status: SkillStatus;
  /** Every version number restored, ascending. */
  readonly versions: number[];
  readonly activeVersion: number;
}

export interface RebuildReport {
  readonly rebuilt: RebuiltSkill[];
  /** What could not be restored exactly (defaults used, files repaired, conflicts resolved). */
  readonly warnings: string[];
  /** Files of the previous registry, moved aside (empty when there was none). */
  readonly movedAside: string[];
  readonly registryFile: string;
}

/**
 * The rebuild cannot run: a populated or unreadable registry without `force`, a registry that
 * another process (the service) holds open, or no skill files to rebuild from.
 */
export class RebuildRefusedError extends FailedPreconditionError {}

/**
 * Recreates `registry.db` from the canonical directory alone, for when the database was lost.
 *
 * Each `<name>.py` in the active directory, `retired/` or `.trash/` is a skill (status from its
 * location: live skills keep the mirror's live status, else `active`; `retired/` → retired;
 * `.trash/` → deleted). Every `.versions/<name>/<n>.py` becomes a version; the metadata of a
 * version comes from its mirror file (`.registry/<name>.json`) when the mirror recorded that version with the same
 * content hash, else from the mirror's skill entry, else defaults. The active version is the one
 * whose hash matches `<name>.py`; when none does, the active file becomes a new version (origin
 * `rebuild`, history file written). Counters, pin, dates and status reason come from the mirror.
 * A version's test files are the mirror's list of them, each checked against the store's copy
 * (docs/files.md#test-files). Invocation telemetry is not in the directory and starts empty.
 *
 * The new database is built beside the old one and renamed into place at the end, so a failed
 * rebuild changes nothing. Run it with the service stopped: a registry file that another process
 * holds open is detected (an exclusive lock is refused) and the rebuild refused, but a service
 * that started on an empty database after the loss cannot be told apart from no service.
 */
export async function rebuildRegistry(options: RebuildOptions): Promise<RebuildReport> {
  const { logger } = options;
  const now = options.now ?? new Date();
  const home = path.resolve(options.home);
  const dbFile = path.join(home, REGISTRY_FILE);
  const store = new CanonicalStore(home);
  const warnings: string[] = [];

  const existing = await inspectExistingRegistry(dbFile);
  if (existing.state === "in-use") {
    throw new RebuildRefusedError(
      `${dbFile} is held open by another process (is the skill engine running?); stop the service, then run the rebuild again`,
    );
  }
  if (existing.state === "populated" && !options.force) {
    throw new RebuildRefusedError(
      `${dbFile} already holds ${existing.skills} skill(s); refusing to replace it. Rerun with --force to move it aside ` +
        `(to ${REGISTRY_FILE}.bak-<timestamp>, never deleted) and rebuild from ${store.directory}`,
    );
  }
  if (existing.state === "unreadable" && !options.force) {
    throw new RebuildRefusedError(
      `${dbFile} exists but cannot be read (${existing.reason}); rerun with --force to move it aside and rebuild from ${store.directory}`,
    );
  }

  const mirror = await readMirrorIndex(store, warnings);
  const found = await scanStore(store);
  if (found.size === 0) {
    throw new RebuildRefusedError(`no skill files under ${store.directory}; nothing to rebuild from (is SKILL_ENGINE_HOME right?)`);
  }

  const plans: SkillPlan[] = [];
  for (const name of [...found.keys()].sort()) {
    if (!SKILL_NAME_PATTERN.test(name)) {
      warnings.push(`"${name}.py" is not a valid skill name; not rebuilt`);
      continue;
    }
    const plan = planSkill(name, found.get(name) as FoundSkill, mirror.get(name), warnings);
    if (plan) plans.push({ ...plan, skill: { ...plan.skill, versions: await checkedTestFiles(store, plan, warnings) } });
  }
  for (const name of mirror.keys()) {
    if (!found.has(name))
      warnings.push(`${name}: in the mirror (${mirrorFileLabel(name)}) but no file of it is in the canonical store; not rebuilt`);
  }

  // History files the registry will point at must exist before it does (the registration order).
  for (const plan of plans) {
    for (const missing of plan.missingHistory) {
      await mkdir(store.versionsDir(plan.skill.name, plan.location), { recursive: true, mode: 0o700 });
      await writeFileAtomic(store.versionPath(plan.skill.name, missing.version, plan.location), missing.code);
    }
  }

  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const building = `${dbFile}.rebuilding-${stamp}`;
  const registry = SkillRegistry.open(building, options.policy);
  try {
    for (const plan of plans) registry.importSkill(plan.skill);
  } catch (error) {
    registry.close();
    for (const suffix of SQLITE_SIDE_FILES) await unlink(`${building}${suffix}`).catch(() => undefined);
    throw error;
  }
  registry.close();

  const movedAside: string[] = [];
  if (existing.state !== "missing" || (await anyExists(SQLITE_SIDE_FILES.map((s) => `${dbFile}${s}`)))) {
    const backup = await freeBackupName(dbFile, stamp);
    for (const suffix of SQLITE_SIDE_FILES) {
      if (!(await pathExists(`${dbFile}${suffix}`))) continue;
      await rename(`${dbFile}${suffix}`, `${backup}${suffix}`);
      movedAside.push(`${backup}${suffix}`);
    }
  }
  for (const suffix of SQLITE_SIDE_FILES) {
    if (await pathExists(`${building}${suffix}`)) await rename(`${building}${suffix}`, `${dbFile}${suffix}`);
  }
  await fsyncDirectory(home);

  const rebuilt = plans.map(({ skill }) => ({
    name: skill.name,
    status: skill.status,
    versions: skill.versions.map((v) => v.version),
    activeVersion: skill.activeVersion,
  }));
  logger.info(
    { registry: dbFile, directory: store.directory, skills: rebuilt.length, movedAside },
    "registry rebuilt from the canonical store",
  );
  if (warnings.length > 0) logger.warn({ warnings }, "registry rebuild used defaults or repaired files");
  return { rebuilt, warnings, movedAside, registryFile: dbFile };
}

type ExistingRegistry =
  | { state: "missing" }
  | { state: "empty" }
  | { state: "populated"; skills: number }
  | { state: "unreadable"; reason: string }
  | { state: "in-use" };

/**
 * Counts the skills of an existing registry under an exclusive lock. In WAL mode every open
 * connection holds a shared lock on the WAL index, so a running service makes the lock fail at
 * once (busy timeout 0). Closing the probe checkpoints the WAL, leaving one self-contained file.
 */
async function inspectExistingRegistry(dbFile: string): Promise<ExistingRegistry> {
  if (!(await pathExists(dbFile))) return { state: "missing" };
  let db: Database.Database | undefined;
  try {
    db = new Database(dbFile, { fileMustExist: true });
    db.pragma("busy_timeout = 0");
    db.pragma("locking_mode = EXCLUSIVE");
    db.exec("BEGIN EXCLUSIVE");
    try {
      const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'skills'").get();
      const skills = table ? (db.prepare("SELECT COUNT(*) AS n FROM skills").get() as { n: number }).n : 0;
      return skills > 0 ? { state: "populated", skills } : { state: "empty" };
    } finally {
      db.exec("ROLLBACK");
    }
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    if (code === "SQLITE_BUSY" || code === "SQLITE_LOCKED") return { state: "in-use" };
    return { state: "unreadable", reason: errorMessage(error) };
  } finally {
    db?.close();
  }
}

/** The mirror (`.registry/`, and an older home's `skills_registry.json`), read leniently: a missing or damaged mirror only costs metadata. */
async function readMirrorIndex(store: CanonicalStore, warnings: string[]): Promise<Map<string, RecordedSkill>> {
  let files: MirrorFilesReading;
  try {
    files = await store.mirror.read();
  } catch (error) {
    warnings.push(
      `the mirror (${MIRROR_DIR}/) cannot be read (${errorMessage(error)}); ` +
        "names, versions and code are rebuilt from the files, descriptions, schemas, counters and statuses get defaults",
    );
    return new Map();
  }
  warnings.push(...files.problems);
  if (files.document === undefined) {
    warnings.push(`the mirror (${MIRROR_DIR}/) is missing; descriptions, schemas, counters and statuses get defaults`);
    return new Map();
  }
  const reading = readMirrorDocument(files.document);
  for (const problem of reading.problems) warnings.push(`the mirror ${problem}`);
  return reading.skills;
}

interface FoundFile {
  readonly location: StoreLocation;
  readonly code: string;
  readonly mtime: Date;
}

interface FoundSkill {
  readonly activeFiles: FoundFile[];
  readonly versions: Map<number, FoundFile[]>;
}

/** Every skill file in every location, grouped by name. */
async function scanStore(store: CanonicalStore): Promise<Map<string, FoundSkill>> {
  const found = new Map<string, FoundSkill>();
  const of = (name: string): FoundSkill => {
    let skill = found.get(name);
    if (!skill) {
      skill = { activeFiles: [], versions: new Map() };
      found.set(name, skill);
    }
    return skill;
  };
  for (const location of STORE_LOCATIONS) {
    for (const name of await store.activeNames(location)) {
      const file = store.activePath(name, location);
      const code = await store.readActive(name, location);
      if (code !== undefined) of(name).activeFiles.push({ location, code, mtime: (await stat(file)).mtime });
    }
    for (const { name, version } of await store.versionFiles(location)) {
      const code = await store.readVersion(name, version, location);
      if (code === undefined) continue;
      const versions = of(name).versions;
      const files = versions.get(version) ?? [];
      files.push({ location, code, mtime: (await stat(store.versionPath(name, version, location))).mtime });
      versions.set(version, files);
    }
  }
  return found;
}

interface SkillPlan {
  readonly skill: ImportedSkill;
  readonly location: StoreLocation;
  /** Versions whose history file is missing and must be written before the registry points at them. */
  readonly missingHistory: Array<{ version: number; code: string }>;
  /** Versions the mirror does not record as they are: their test files are taken as the store holds them. */
  readonly unrecorded: ReadonlySet<number>;
}

const LOCATION_LABEL: Readonly<Record<StoreLocation, string>> = {
  active: "the active directory",
  retired: "retired/",
  trash: ".trash/",
};

/** Decides one skill's location, versions, active version and metadata from its files and the mirror. */
function planSkill(name: string, found: FoundSkill, entry: RecordedSkill | undefined, warnings: string[]): SkillPlan | undefined {
  const warn = (message: string): void => {
    warnings.push(`${name}: ${message}`);
  };

  // A crash in the middle of a move can leave the active file in one location and the history
  // in another; the active file decides, and start-up reconciliation gathers the rest.
  const candidates = unique(
    found.activeFiles.length > 0 ? found.activeFiles.map((f) => f.location) : [...found.versions.values()].flat().map((f) => f.location),
  );
  const preferred = entry?.status === undefined ? undefined : locationOf(entry.status);
  const location = preferred !== undefined && candidates.includes(preferred) ? preferred : candidates[0];
  if (location === undefined) return undefined;
  if (candidates.length > 1) {
    warn(`files in ${candidates.map((l) => LOCATION_LABEL[l]).join(" and ")}; the copy in ${LOCATION_LABEL[location]} is used`);
  }
  const activeFile = found.activeFiles.find((f) => f.location === location);

  const activeMirrorVersion = entry?.versions.find((v) => v.version === entry.version);
  const skillDescription = entry?.description ?? activeMirrorVersion?.description;
  const skillSchema = activeMirrorVersion?.parametersSchema ?? entry?.parametersSchema;
  const unrecorded = new Set<number>();
  const metadataOf = (version: number, hash: string, mtime: Date): Omit<VersionRecord, "name" | "version" | "contentHash"> => {
    const recorded = entry?.versions.find((v) => v.version === version && v.contentHash === hash);
    if (!recorded) unrecorded.add(version);
    if (entry && !recorded) {
      const other = entry.versions.find((v) => v.version === version);
      warn(
        other
          ? `v${version} differs from what ${mirrorFileLabel(name)} recorded for it; its metadata is taken from the skill's entry`
          : `v${version} is not in ${mirrorFileLabel(name)}; its metadata is taken from the skill's entry`,
      );
    }
    return {
      description:
        recorded?.description ?? skillDescription ?? `Rebuilt from the canonical store (${name}.py); the original description was lost`,
      parametersSchema: recorded?.parametersSchema ?? skillSchema ?? DEFAULT_SCHEMA,
      testPayload: recorded?.testPayload ?? activeMirrorVersion?.testPayload ?? DEFAULT_TEST_PAYLOAD,
      origin: recorded?.origin ?? "rebuild",
      createdAt: recorded?.createdAt ?? mtime,
      ...(recorded?.packages ? { packages: recorded.packages } : {}),
      ...(recorded?.testFiles ? { testFiles: recorded.testFiles } : {}),
      ...(recorded?.secrets && recorded.secrets.length > 0 ? { secrets: recorded.secrets } : {}),
      ...(recorded?.networkAllow && recorded.networkAllow.length > 0 ? { networkAllow: recorded.networkAllow } : {}),
    };
  };

  const versions: VersionRecord[] = [];
  for (const [version, files] of [...found.versions.entries()].sort(([a], [b]) => a - b)) {
    const file = files.find((f) => f.location === location) ?? (files[0] as FoundFile);
    const hash = contentHash(file.code);
    versions.push({ name, version, contentHash: hash, ...metadataOf(version, hash, file.mtime) });
  }

  const missingHistory: Array<{ version: number; code: string }> = [];
  let activeVersion: number;
  if (activeFile) {
    const hash = contentHash(activeFile.code);
    const matching = versions.filter((v) => v.contentHash === hash).map((v) => v.version);
    if (matching.length > 0) {
      activeVersion = entry?.version !== undefined && matching.includes(entry.version) ? entry.version : Math.max(...matching);
    } else {
      // The history lacks the active code: restore the number the mirror knew it by, if free.
      const taken = new Set(versions.map((v) => v.version));
      const known = entry?.versions.find((v) => v.contentHash === hash && !taken.has(v.version));
      activeVersion = known?.version ?? Math.max(0, ...taken) + 1;
      const metadata = metadataOf(activeVersion, hash, activeFile.mtime);
      versions.push({ name, version: activeVersion, contentHash: hash, ...metadata, origin: known ? metadata.origin : "rebuild" });
      versions.sort((a, b) => a.version - b.version);
      missingHistory.push({ version: activeVersion, code: activeFile.code });
      warn(
        versions.length === 1
          ? `no history; v${activeVersion} made from ${name}.py (history file written)`
          : `${name}.py matches no version in its history; added as v${activeVersion} (history file written)`,
      );
    }
  } else {
    const recorded =
      entry?.version === undefined ? undefined : versions.find((v) => v.version === entry.version && v.contentHash === entry.contentHash);
    activeVersion = recorded?.version ?? Math.max(...versions.map((v) => v.version));
    warn(`${name}.py is missing; v${activeVersion} made active (the next start rewrites ${name}.py from history)`);
  }

  let status: SkillStatus;
  if (location === "retired") status = "retired";
  else if (location === "trash") status = "deleted";
  else status = entry?.status !== undefined && isLive(entry.status) ? entry.status : "active";
  if (entry?.status !== undefined && entry.status !== status) {
    warn(`${mirrorFileLabel(name)} says ${entry.status} but the files are in ${LOCATION_LABEL[location]}; rebuilt as ${status}`);
  }
  const statusReason =
    entry?.status === status
      ? (entry.statusReason ?? "")
      : status === "active"
        ? ""
        : `found in ${LOCATION_LABEL[location]} by a registry rebuild`;

  return {
    location,
    missingHistory,
    unrecorded,
    skill: {
      name,
      status,
      statusReason,
      activeVersion,
      usageCount: entry?.usageCount ?? 0,
      failureCount: entry?.failureCount ?? 0,
      protected: entry?.protected ?? false,
      autoCreated: entry?.autoCreated ?? false,
      createdAt: entry?.createdAt ?? new Date(Math.min(...versions.map((v) => v.createdAt.getTime()))),
      lastInvokedAt: entry?.lastInvokedAt,
      versions,
      // Without a mirror entry nobody can say whose a skill was: the local agent's, private.
      access: { owner: entry?.owner ?? LOCAL_AGENT, visibility: entry?.visibility ?? "private" },
      sharing: {
        system: entry?.system ?? false,
        enabled: entry?.enabled ?? true,
        disabledBy: entry?.disabledBy ?? "",
        grants: entry?.grants ?? [],
      },
    },
  };
}

/** `registry.db.bak-<stamp>`, with a counter if a backup of that name (or its side files) exists. */
async function freeBackupName(dbFile: string, stamp: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const candidate = `${dbFile}.bak-${stamp}${attempt === 0 ? "" : `-${attempt}`}`;
    if (!(await anyExists(SQLITE_SIDE_FILES.map((s) => `${candidate}${s}`)))) return candidate;
  }
}

function unique<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

async function anyExists(files: readonly string[]): Promise<boolean> {
  for (const file of files) if (await pathExists(file)) return true;
  return false;
}
