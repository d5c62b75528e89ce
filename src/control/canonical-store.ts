import { mkdir, readdir, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { TEMP_FILE_PREFIX, writeFileAtomic } from "./atomic-file.js";

const VERSIONS_DIR = ".versions";
const ORPHANS_DIR = ".orphans";
export const MIRROR_FILE = "skills_registry.json";

/** One skill as recorded in `skills_registry.json`, the mirror that lets the directory alone rebuild the registry. */
export interface MirrorEntry {
  readonly name: string;
  readonly description: string;
  readonly parameters_schema: unknown;
  readonly status: string;
  readonly version: number;
  readonly content_hash: string;
  readonly usage_count: number;
  readonly failure_count: number;
  readonly created_at: string;
  readonly updated_at: string;
  readonly last_invoked_at: string | null;
}

/**
 * The canonical copies of skill code, under `$SKILL_ENGINE_HOME/memory/acquired_skills/`. This
 * directory is never mounted into a container; every write is atomic.
 *
 * - `<name>.py`                the active version
 * - `.versions/<name>/<n>.py`  immutable history, written before the registry commits a version
 * - `skills_registry.json`     mirror of the registry
 */
export class CanonicalStore {
  readonly directory: string;

  constructor(home: string) {
    this.directory = path.join(path.resolve(home), "memory", "acquired_skills");
  }

  async init(): Promise<void> {
    await mkdir(path.join(this.directory, VERSIONS_DIR), { recursive: true, mode: 0o700 });
  }

  activePath(name: string): string {
    return path.join(this.directory, `${name}.py`);
  }

  versionPath(name: string, version: number): string {
    return path.join(this.directory, VERSIONS_DIR, name, `${version}.py`);
  }

  async writeVersion(name: string, version: number, code: string): Promise<void> {
    await mkdir(path.join(this.directory, VERSIONS_DIR, name), { recursive: true, mode: 0o700 });
    await writeFileAtomic(this.versionPath(name, version), code);
  }

  async writeActive(name: string, code: string): Promise<void> {
    await writeFileAtomic(this.activePath(name), code);
  }

  /** The active code, or undefined when the file is missing. */
  async readActive(name: string): Promise<string | undefined> {
    return readIfExists(this.activePath(name));
  }

  async readVersion(name: string, version: number): Promise<string | undefined> {
    return readIfExists(this.versionPath(name, version));
  }

  async writeMirror(entries: readonly MirrorEntry[]): Promise<void> {
    const document = { format: 1, skills: entries };
    await writeFileAtomic(path.join(this.directory, MIRROR_FILE), `${JSON.stringify(document, null, 2)}\n`);
  }

  /** Names that have an active `<name>.py`. */
  async activeNames(): Promise<string[]> {
    const entries = await readdir(this.directory, { withFileTypes: true });
    return entries
      .filter((e) => e.isFile() && e.name.endsWith(".py") && !e.name.startsWith("."))
      .map((e) => e.name.slice(0, -".py".length))
      .sort();
  }

  /** Every `(name, version)` pair under `.versions/`. */
  async versionFiles(): Promise<Array<{ name: string; version: number }>> {
    const root = path.join(this.directory, VERSIONS_DIR);
    const found: Array<{ name: string; version: number }> = [];
    for (const skillDir of await readdir(root, { withFileTypes: true })) {
      if (!skillDir.isDirectory()) continue;
      for (const file of await readdir(path.join(root, skillDir.name))) {
        const match = /^(\d+)\.py$/.exec(file);
        if (match?.[1]) found.push({ name: skillDir.name, version: Number(match[1]) });
      }
    }
    return found;
  }

  async removeVersion(name: string, version: number): Promise<void> {
    await unlink(this.versionPath(name, version)).catch(ignoreMissing);
  }

  /** Moves an active file the registry does not know into `.orphans/`, so nothing is destroyed. */
  async moveOrphanAside(name: string, now: Date): Promise<string> {
    const orphans = path.join(this.directory, ORPHANS_DIR);
    await mkdir(orphans, { recursive: true, mode: 0o700 });
    const destination = path.join(orphans, `${name}.${now.toISOString().replace(/[:.]/g, "-")}.py`);
    await rename(this.activePath(name), destination);
    return destination;
  }

  /** Deletes temp files of atomic writes that a crash interrupted. Returns how many. */
  async removeStaleTempFiles(): Promise<number> {
    let removed = 0;
    const directories = [this.directory, path.join(this.directory, VERSIONS_DIR)];
    for (const entry of await readdir(path.join(this.directory, VERSIONS_DIR), { withFileTypes: true })) {
      if (entry.isDirectory()) directories.push(path.join(this.directory, VERSIONS_DIR, entry.name));
    }
    for (const directory of directories) {
      for (const file of await readdir(directory)) {
        if (!file.startsWith(TEMP_FILE_PREFIX)) continue;
        await unlink(path.join(directory, file)).catch(ignoreMissing);
        removed++;
      }
    }
    return removed;
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
