import { createHash, randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { InvalidArgumentError, NotFoundError } from "../errors/index.js";
import type { SandboxFolderFile } from "../execution/index.js";
import { writeFileAtomic } from "../control/index.js";
import { SKILL_ID_FILE } from "./skill-identity.js";

/** A file of a skill folder in memory: its path inside the folder and its bytes. */
export type FolderContent = SandboxFolderFile;

/**
 * The canonical copies of folder skills (docs/skill-sources.md#storage):
 * `$SKILL_ENGINE_HOME/memory/skill_folders/<name>/v<version>/`, one immutable folder per version,
 * never mounted into any container and never the discovery directory itself. A run gets a copy of
 * these bytes in its own run directory.
 */
export class FolderStore {
  readonly directory: string;

  constructor(home: string) {
    this.directory = path.join(path.resolve(home), "memory", "skill_folders");
  }

  pathOf(name: string, version: number): string {
    return path.join(this.directory, name, `v${version}`);
  }

  /** Writes version `version` of `name` in full under a temporary name, then renames it into place. */
  async write(name: string, version: number, files: readonly FolderContent[]): Promise<void> {
    const parent = path.join(this.directory, name);
    await mkdir(parent, { recursive: true, mode: 0o700 });
    const staging = path.join(parent, `.tmp-v${version}-${randomBytes(4).toString("hex")}`);
    await mkdir(staging, { mode: 0o700 });
    try {
      for (const file of files) {
        const target = path.join(staging, ...checkedSegments(file.path));
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        const handle = await open(target, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY | constants.O_NOFOLLOW, 0o600);
        try {
          await handle.writeFile(file.content);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
      const final = this.pathOf(name, version);
      // A version number whose commit failed earlier may have left its folder: it was never live.
      await rm(final, { recursive: true, force: true });
      await rename(staging, final);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }

  /** Removes a version's folder (and its source record) that the registry never committed. */
  async discard(name: string, version: number): Promise<void> {
    await rm(this.pathOf(name, version), { recursive: true, force: true });
    await rm(`${this.pathOf(name, version)}.json`, { force: true });
  }

  /**
   * Writes what the registry keeps about a version's source beside its folder (`v<n>.json`), so
   * the store alone can rebuild the registry's source rows (docs/skill-sources.md#storage).
   */
  async writeRecord(name: string, version: number, record: Record<string, unknown>): Promise<void> {
    await writeFileAtomic(`${this.pathOf(name, version)}.json`, `${JSON.stringify(record, null, 2)}\n`);
  }

  /** Every version's source record in the store; unreadable ones are skipped. */
  async records(): Promise<Array<Record<string, unknown>>> {
    const out: Array<Record<string, unknown>> = [];
    const names = await readdir(this.directory).catch(() => [] as string[]);
    for (const name of names) {
      const files = await readdir(path.join(this.directory, name)).catch(() => [] as string[]);
      for (const file of files.filter((f) => /^v\d+\.json$/.test(f))) {
        try {
          const parsed: unknown = JSON.parse(await readFile(path.join(this.directory, name, file), "utf8"));
          if (typeof parsed === "object" && parsed !== null) out.push(parsed as Record<string, unknown>);
        } catch {
          // A record that cannot be read rebuilds nothing; the folder's next scan registers it again.
        }
      }
    }
    return out;
  }

  /** Every file of a stored version, in path order, read without following anything. */
  async read(name: string, version: number): Promise<FolderContent[]> {
    return readFolder(this.pathOf(name, version));
  }

  /** The bundled files of a stored version: paths and sizes. */
  async list(name: string, version: number): Promise<Array<{ path: string; bytes: number }>> {
    const root = this.pathOf(name, version);
    const out: Array<{ path: string; bytes: number }> = [];
    await walk(root, "", async (relative, size) => {
      out.push({ path: relative, bytes: size });
    });
    return out;
  }

  /**
   * One file of a stored version (GetSkillFile): the path must name a regular file inside the
   * folder, and be at most `maxBytes` long. INVALID_ARGUMENT for a path that could leave the folder.
   */
  async readFile(name: string, version: number, relative: string, maxBytes: number): Promise<Buffer> {
    const segments = checkedSegments(relative, "path");
    const target = path.join(this.pathOf(name, version), ...segments);
    // Every parent is a directory of our own copy, written without links; lstat still refuses a link.
    let stats;
    try {
      stats = await lstat(target);
    } catch {
      throw new NotFoundError(`"${name}" has no bundled file ${JSON.stringify(relative)}`);
    }
    if (!stats.isFile()) throw new NotFoundError(`"${name}" has no bundled file ${JSON.stringify(relative)} (not a regular file)`);
    if (stats.size > maxBytes) {
      throw new InvalidArgumentError("path", `${relative} is ${stats.size} bytes; GetSkillFile returns files of at most ${maxBytes} bytes`);
    }
    const handle = await open(target, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      return await handle.readFile();
    } finally {
      await handle.close();
    }
  }
}

/** Reads every regular file under `root` (no links followed), in path order. */
export async function readFolder(root: string, skip: ReadonlySet<string> = new Set()): Promise<FolderContent[]> {
  const files: FolderContent[] = [];
  await walk(root, "", async (relative) => {
    if (skip.has(relative)) return;
    const handle = await open(path.join(root, relative), constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      files.push({ path: relative, content: await handle.readFile() });
    } finally {
      await handle.close();
    }
  });
  return files;
}

/** Files read from a discovery folder: everything but the `.skill_id` (the id is kept in the registry). */
export function readDiscoveredFolder(folder: string): Promise<FolderContent[]> {
  return readFolder(folder, new Set([SKILL_ID_FILE]));
}

async function walk(root: string, relative: string, visit: (relative: string, size: number) => Promise<void>): Promise<void> {
  const entries = await readdir(path.join(root, relative), { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const member = relative === "" ? entry.name : `${relative}/${entry.name}`;
    const stats = await lstat(path.join(root, member));
    if (stats.isDirectory()) await walk(root, member, visit);
    else if (stats.isFile()) await visit(member, stats.size);
  }
}

/** The segments of a relative path inside a folder; INVALID_ARGUMENT for anything that could leave it. */
export function checkedSegments(relative: string, field = "path"): string[] {
  if (relative === "" || relative.length > 512) throw new InvalidArgumentError(field, "must be a relative path of at most 512 characters");
  if (relative.startsWith("/") || /^[A-Za-z]:/.test(relative) || relative.includes("\\") || relative.includes("\0")) {
    throw new InvalidArgumentError(field, `${JSON.stringify(relative)} must be a relative path inside the skill folder`);
  }
  const segments = relative.split("/");
  if (segments.some((s) => s === ".." || s === "." || s === "")) {
    throw new InvalidArgumentError(field, `${JSON.stringify(relative)} must not contain "..", "." or empty segments`);
  }
  return segments;
}

/** Discovery's content hash over files in memory: SHA-256 over each path, size and bytes, without the `.skill_id`. */
export function folderHash(files: readonly FolderContent[]): string {
  const hash = createHash("sha256");
  for (const file of files) {
    if (file.path === ".skill_id") continue;
    hash.update(`${file.path}\0${file.content.length}\0`);
    hash.update(file.content);
  }
  return hash.digest("hex");
}
