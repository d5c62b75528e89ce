import { type Dirent, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, rmdir, unlink } from "node:fs/promises";
import path from "node:path";
import { fsyncDirectory, type PreparedFile, prepareFileAtomic, stageFile, TEMP_FILE_PREFIX, writeFileAtomic } from "./atomic-file.js";
import { MIRROR_DIR, MirrorFiles } from "./mirror-files.js";
import type { SkillStatus, TestFileEntry } from "../registry/index.js";
import { pathExists } from "./path-exists.js";
import {
  listTestFilesAt,
  readTestFilesAt,
  type StoredTestFile,
  TEST_FILES_SUFFIX,
  type TestFilesReading,
  writeTestFilesAt,
} from "./version-test-files.js";

const VERSIONS_DIR = ".versions";
/** A staged version's temp file is `.tmp-<name>.version-<hex>` in the active directory (see stageVersion). */
const STAGED_VERSION_LABEL = ".version";
const ORPHANS_DIR = ".orphans";

/** Where a skill's files live: the active directory, `retired/`, or `.trash/` (soft delete). */
export type StoreLocation = "active" | "retired" | "trash";
export const STORE_LOCATIONS: readonly StoreLocation[] = ["active", "retired", "trash"];

export function locationOf(status: SkillStatus): StoreLocation {
  if (status === "retired") return "retired";
  if (status === "deleted") return "trash";
  return "active";
}

/**
 * The canonical copies of skill code, under `$SKILL_ENGINE_HOME/memory/acquired_skills/`. This
 * directory is never mounted into a container; every write is atomic, every move a rename.
 *
 * - `<name>.py`                        the active version of a live skill
 * - `.versions/<name>/<n>.py`          immutable history, written before the registry commits a version
 * - `.versions/<name>/<n>.test-files/` that version's test files, if any, written before it too
 *                                      (docs/files.md#test-files)
 * - `retired/<name>.py`, `retired/.versions/<name>/`   retired skills, restorable
 * - `.trash/<name>.py`, `.trash/.versions/<name>/`     deleted skills, restorable
 * - `.registry/<name>.json`            each skill's mirror: its registry record and versions, enough
 *                                      with the code to rebuild it (mirror-files.ts)
 */
/** See {@link CanonicalStore.stageVersion}. */
export interface StagedVersion {
  /** Renames it into the history as `version`, on the calling thread (see {@link CanonicalStore.stageVersion}). */
  commitAs(version: number): void;
  discard(): Promise<void>;
}

export class CanonicalStore {
  readonly directory: string;
  /** The registry's mirror, a file per skill. */
  readonly mirror: MirrorFiles;

  constructor(home: string) {
    this.directory = path.join(path.resolve(home), "memory", "acquired_skills");
    this.mirror = new MirrorFiles(this.directory);
  }

  /** Creates the store's directories; `mirrorCreated`: the mirror's directory was not there (a new home, or one an operator emptied). */
  async init(): Promise<{ mirrorCreated: boolean }> {
    for (const location of STORE_LOCATIONS) {
      await mkdir(path.join(this.dirOf(location), VERSIONS_DIR), { recursive: true, mode: 0o700 });
    }
    const created = await mkdir(path.join(this.directory, MIRROR_DIR), { recursive: true, mode: 0o700 });
    return { mirrorCreated: created !== undefined };
  }

  dirOf(location: StoreLocation): string {
    if (location === "retired") return path.join(this.directory, "retired");
    if (location === "trash") return path.join(this.directory, ".trash");
    return this.directory;
  }

  activePath(name: string, location: StoreLocation = "active"): string {
    return path.join(this.dirOf(location), `${name}.py`);
  }

  versionsDir(name: string, location: StoreLocation = "active"): string {
    return path.join(this.dirOf(location), VERSIONS_DIR, name);
  }

  versionPath(name: string, version: number, location: StoreLocation = "active"): string {
    return path.join(this.versionsDir(name, location), `${version}.py`);
  }

  /** A version's test-files directory, beside its history file (docs/files.md#test-files). */
  testFilesDir(name: string, version: number, location: StoreLocation = "active"): string {
    return path.join(this.versionsDir(name, location), `${version}${TEST_FILES_SUFFIX}`);
  }

  /**
   * Writes a new version's test files (atomic as a whole, each file 0444) before the registry
   * commits the version; returns what the registry lists of them. No files: nothing is written.
   */
  async writeTestFiles(name: string, version: number, files: readonly StoredTestFile[]): Promise<TestFileEntry[]> {
    if (files.length === 0) return [];
    await mkdir(this.versionsDir(name), { recursive: true, mode: 0o700 });
    return writeTestFilesAt(this.testFilesDir(name, version), files);
  }

  /** A version's test files as the registry lists them, read without following links and checked (see readTestFilesAt). */
  async readTestFiles(
    name: string,
    version: number,
    entries: readonly TestFileEntry[],
    location: StoreLocation = "active",
  ): Promise<TestFilesReading> {
    if (entries.length === 0) return { files: [], problems: [] };
    return readTestFilesAt(this.testFilesDir(name, version, location), entries);
  }

  /** What a version's test-files directory holds when no list of it survived (a rebuild); undefined: no directory. */
  async listTestFiles(name: string, version: number, location: StoreLocation): Promise<TestFilesReading | undefined> {
    return listTestFilesAt(this.testFilesDir(name, version, location));
  }

  async writeVersion(name: string, version: number, code: string): Promise<void> {
    await mkdir(this.versionsDir(name), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.versionPath(name, version), code);
  }

  /**
   * A new version's code written and fsynced before its number is known (while its test runs:
   * docs/performance.md#registration), as a temp file in the active directory (never inside a
   * history directory, which a retirement may move meanwhile), and its name made durable too (the
   * directory fsynced, still off the caller's wait). `commitAs` renames it into the history under
   * its number on the calling thread (microseconds on the registration's critical path) without
   * waiting for another directory fsync: until that rename is on disk, a host
   * crash leaves the code under its staged name, where start-up finds it ({@link stagedVersions}).
   * `discard` removes it; a crash before the commit leaves a temp file that start-up removes.
   */
  async stageVersion(name: string, code: string): Promise<StagedVersion> {
    const staged = await stageFile(this.directory, `${name}${STAGED_VERSION_LABEL}`, code);
    try {
      await fsyncDirectory(this.directory);
    } catch (error) {
      await staged.discard();
      throw error;
    }
    return {
      commitAs: (version) => {
        const directory = this.versionsDir(name);
        mkdirSync(directory, { recursive: true, mode: 0o700 });
        staged.renameNow(this.versionPath(name, version));
        // Durable already under the staged name; this only spares start-up the repair. A failure
        // here changes nothing the caller could act on.
        void fsyncDirectory(directory).catch(() => undefined);
      },
      discard: () => staged.discard(),
    };
  }

  /**
   * Staged versions' temp files left in the active directory (a crash between staging and the
   * cleanup), with their skill's name and code: start-up puts a committed version whose history
   * file is missing back from here before it removes temp files (recovery/reconcile.ts).
   */
  async stagedVersions(): Promise<Array<{ name: string; code: string }>> {
    const found: Array<{ name: string; code: string }> = [];
    const pattern = new RegExp(`^${escapeRegExp(TEMP_FILE_PREFIX)}(.+)${escapeRegExp(STAGED_VERSION_LABEL)}-[0-9a-f]+$`);
    for (const file of await readdir(this.directory).catch(() => [])) {
      const name = pattern.exec(file)?.[1];
      if (name === undefined) continue;
      const code = await readIfExists(path.join(this.directory, file));
      if (code !== undefined) found.push({ name, code });
    }
    return found;
  }

  /** Writes a committed version's missing history file (start-up repair; atomic, fsynced). */
  async restoreVersion(name: string, version: number, code: string, location: StoreLocation): Promise<void> {
    await mkdir(this.versionsDir(name, location), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.versionPath(name, version, location), code);
  }

  async writeActive(name: string, code: string, location: StoreLocation = "active"): Promise<void> {
    await writeFileAtomic(this.activePath(name, location), code);
  }

  /** The new active file written in full beside the current one, replacing it only on `commit`. */
  async prepareActive(name: string, code: string, location: StoreLocation = "active"): Promise<PreparedFile> {
    return prepareFileAtomic(this.activePath(name, location), code);
  }

  /**
   * Removes a history file whose version the registry never committed (the commit failed after
   * the file was written), and the skill's history directory when that leaves it empty. History
   * the registry knows is never removed.
   */
  async discardUncommittedVersion(name: string, version: number): Promise<void> {
    await unlink(this.versionPath(name, version)).catch(() => undefined);
    await rm(this.testFilesDir(name, version), { recursive: true, force: true }).catch(() => undefined);
    await rmdir(this.versionsDir(name)).catch(() => undefined);
  }

  /** The active code, or undefined when the file is missing. */
  async readActive(name: string, location: StoreLocation = "active"): Promise<string | undefined> {
    return readIfExists(this.activePath(name, location));
  }

  async readVersion(name: string, version: number, location: StoreLocation = "active"): Promise<string | undefined> {
    return readIfExists(this.versionPath(name, version, location));
  }

  /**
   * Moves a skill's active file and history from one location to another, each with one rename.
   * Anything already at the destination is moved aside first, so nothing is ever overwritten.
   */
  async moveSkill(name: string, from: StoreLocation, to: StoreLocation, now: Date): Promise<void> {
    if (from === to) return;
    await mkdir(path.join(this.dirOf(to), VERSIONS_DIR), { recursive: true, mode: 0o700 });
    for (const [source, target] of [
      [this.activePath(name, from), this.activePath(name, to)],
      [this.versionsDir(name, from), this.versionsDir(name, to)],
    ] as const) {
      if (!(await pathExists(source))) continue;
      if (await pathExists(target)) await this.moveAside(target, now);
      await rename(source, target);
      await fsyncDirectory(path.dirname(target));
    }
  }

  /** Names that have a `<name>.py` in a location. */
  async activeNames(location: StoreLocation = "active"): Promise<string[]> {
    const entries = await readdir(this.dirOf(location), { withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => e.isFile() && e.name.endsWith(".py") && !e.name.startsWith("."))
      .map((e) => e.name.slice(0, -".py".length))
      .sort();
  }

  /**
   * Every `(name, version)` pair under a location's `.versions/`. Read with synchronous calls: it
   * runs at start-up (before serving) and offline, one directory per skill, and each call through
   * libuv's pool is a round trip that cost more than the read (docs/performance.md#start-up).
   */
  async versionFiles(location: StoreLocation = "active"): Promise<Array<{ name: string; version: number }>> {
    const root = path.join(this.dirOf(location), VERSIONS_DIR);
    const found: Array<{ name: string; version: number }> = [];
    for (const skillDir of readdirOrEmpty(root)) {
      if (!skillDir.isDirectory()) continue;
      for (const file of readdirSync(path.join(root, skillDir.name))) {
        const match = /^(\d+)\.py$/.exec(file);
        if (match?.[1]) found.push({ name: skillDir.name, version: Number(match[1]) });
      }
    }
    return found;
  }

  /**
   * Which skills have files where, from one listing of each location (its active files and its
   * `.versions/` directories), instead of a lookup per skill (start-up reconciliation).
   */
  presence(): Map<StoreLocation, { active: Set<string>; history: Set<string> }> {
    const found = new Map<StoreLocation, { active: Set<string>; history: Set<string> }>();
    for (const location of STORE_LOCATIONS) {
      const active = new Set<string>();
      for (const entry of readdirOrEmpty(this.dirOf(location))) {
        if (entry.isFile() && entry.name.endsWith(".py") && !entry.name.startsWith(".")) active.add(entry.name.slice(0, -".py".length));
      }
      const history = new Set(
        readdirOrEmpty(path.join(this.dirOf(location), VERSIONS_DIR))
          .filter((entry) => entry.isDirectory())
          .map((entry) => entry.name),
      );
      found.set(location, { active, history });
    }
    return found;
  }

  /** The active code read synchronously (start-up reconciliation, see {@link versionFiles}), or undefined when missing. */
  readActiveNow(name: string, location: StoreLocation = "active"): string | undefined {
    try {
      return readFileSync(this.activePath(name, location), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  /** Removes an uncommitted version's history file and test files (start-up reconciliation). */
  async removeVersion(name: string, version: number, location: StoreLocation = "active"): Promise<void> {
    await unlink(this.versionPath(name, version, location)).catch(ignoreMissing);
    await rm(this.testFilesDir(name, version, location), { recursive: true, force: true });
  }

  /** Moves an active file the registry does not know into `.orphans/`, so nothing is destroyed. */
  async moveOrphanAside(name: string, now: Date, location: StoreLocation = "active"): Promise<string> {
    return this.moveAside(this.activePath(name, location), now);
  }

  /**
   * Deletes temp files of atomic writes that a crash interrupted, and temp directories of test
   * files (removed whole; rm never follows a link it finds inside). Returns how many.
   */
  async removeStaleTempFiles(): Promise<number> {
    let removed = 0;
    const directories: string[] = [path.join(this.directory, MIRROR_DIR)];
    for (const location of STORE_LOCATIONS) {
      const base = this.dirOf(location);
      directories.push(base, path.join(base, VERSIONS_DIR));
      for (const entry of readdirOrEmpty(path.join(base, VERSIONS_DIR))) {
        if (entry.isDirectory()) directories.push(path.join(base, VERSIONS_DIR, entry.name));
      }
    }
    // Listed synchronously: one directory per skill at start-up (see versionFiles).
    for (const directory of directories) {
      for (const { name: file } of readdirOrEmpty(directory)) {
        if (!file.startsWith(TEMP_FILE_PREFIX)) continue;
        await rm(path.join(directory, file), { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }

  private async moveAside(target: string, now: Date): Promise<string> {
    const orphans = path.join(this.directory, ORPHANS_DIR);
    await mkdir(orphans, { recursive: true, mode: 0o700 });
    const relative = path.relative(this.directory, target).replace(/[\\/]/g, "__");
    const destination = path.join(orphans, `${relative}.${now.toISOString().replace(/[:.]/g, "-")}`);
    await rename(target, destination);
    return destination;
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A directory's entries, or none when it is missing or unreadable. */
function readdirOrEmpty(directory: string): Dirent[] {
  try {
    return readdirSync(directory, { withFileTypes: true });
  } catch {
    return [];
  }
}
