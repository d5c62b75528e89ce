import { constants as fsConstants } from "node:fs";
import { lstat, mkdir, open, readdir, rm } from "node:fs/promises";
import path from "node:path";
import type { RunInputFile, SandboxFile, SandboxFolderFile } from "../sandbox-runner.js";

/** Where the run directory appears inside the container, read-only: `python3 /sandbox/skill.py <payload>`. */
export const CONTAINER_CODE_DIR = "/sandbox";
/** The skill's working directory: a size-capped, noexec tmpfs (with /dev/shm, its only writable places). */
export const CONTAINER_SCRATCH_DIR = "/tmp";
export const SKILL_FILE_NAME = "skill.py";
/** Where a skill folder's files go in the run directory (`/sandbox/skill_dir/` in the container). */
export const SKILL_FOLDER_NAME = "skill_dir";
/** Where the caller's input files go in the run directory (`/sandbox/in/` in the container, read-only). */
const INPUT_DIR_NAME = "in";
/**
 * The mount point of the run's output space (docs/files.md#output-files): an empty directory of
 * the run directory, where the container mounts its size-capped tmpfs. The host never reads it.
 */
const OUTPUT_DIR_NAME = "out";
export const CONTAINER_OUTPUT_DIR = `${CONTAINER_CODE_DIR}/${OUTPUT_DIR_NAME}`;

/**
 * Host-side handling of per-run directories under `<sandboxDir>/runs/<run-id>/`.
 *
 * The directory is mounted read-only, so sandboxed code cannot plant anything in it. Every
 * host-side operation still refuses to follow links, as defence in depth against the
 * CVE-2024-28185/28189 class (and against a mount made writable by mistake): files are created
 * with O_CREAT|O_EXCL|O_NOFOLLOW before any container exists, permissions are set on a descriptor
 * opened with O_NOFOLLOW, nothing is ever chowned, and removal happens only after the container is
 * gone, with a walk that unlinks links instead of following them.
 */
export class RunDirectories {
  readonly runsDir: string;
  /**
   * What this process wrote into each live run directory (paths relative to it), so a failed run
   * can tell a directory a wipe is still walking through (some files unlinked, the directory not
   * yet) from an intact one: see {@link intact}.
   */
  private readonly written = new Map<string, string[]>();

  constructor(sandboxDir: string) {
    this.runsDir = path.join(path.resolve(sandboxDir), "runs");
  }

  pathOf(runId: string): string {
    assertRunId(runId);
    return path.join(this.runsDir, runId);
  }

  /**
   * Creates a fresh run directory holding only the skill file (or nothing yet, for a warm
   * container). Recreates `runs/` first, so an operator may delete the whole sandbox directory at
   * any time.
   */
  async create(
    runId: string,
    code: string | undefined,
    files: readonly SandboxFile[] = [],
    folder: readonly SandboxFolderFile[] = [],
    inputFiles: readonly RunInputFile[] = [],
  ): Promise<string> {
    const runDir = this.pathOf(runId);
    for (const extra of files) assertExtraFileName(extra.name);
    for (const member of folder) assertFolderPath(member.path);
    for (const input of inputFiles) assertFolderPath(input.path);
    try {
      // 0700: no other host user can reach run directories; the engine binds them as root.
      await mkdir(this.runsDir, { recursive: true, mode: 0o700 });
      await mkdir(runDir, { mode: 0o700 });
      // The sandbox user (an unprivileged uid inside the container) only needs to read the skill.
      await chmodNoFollow(runDir, 0o755);
      // The output space's mount point must exist: the container cannot make it in a read-only mount.
      await mkdir(path.join(runDir, OUTPUT_DIR_NAME), { mode: 0o755 });
      if (code !== undefined) await this.writeSkill(runId, code, files, folder, inputFiles);
    } catch (error) {
      this.written.delete(runId);
      throw error;
    }
    return runDir;
  }

  /**
   * Writes the skill file into an existing run directory (a warm container's, at hand-over).
   * ENOENT when the directory was wiped meanwhile.
   */
  async writeSkill(
    runId: string,
    code: string,
    files: readonly SandboxFile[] = [],
    folder: readonly SandboxFolderFile[] = [],
    inputFiles: readonly RunInputFile[] = [],
  ): Promise<void> {
    // Dependencies and inputs first: the skill file's appearance is what a run waits for.
    for (const extra of files) {
      assertExtraFileName(extra.name);
      await this.writeReadOnly(runId, extra.name, extra.content);
    }
    if (folder.length > 0) await this.writeTree(runId, SKILL_FOLDER_NAME, folder);
    if (inputFiles.length > 0) await this.writeTree(runId, INPUT_DIR_NAME, inputFiles);
    await this.writeReadOnly(runId, SKILL_FILE_NAME, code);
  }

  /**
   * A tree of files under `top/` of the run directory: a skill folder's under `skill_dir/`
   * (docs/skill-sources.md#running), the caller's input files under `in/` (docs/files.md#input-files).
   * Directories 0755 made fresh (mkdir fails on anything already there), files 0444 as below.
   */
  private async writeTree(runId: string, top: string, members: readonly { path: string; content: string | Buffer }[]): Promise<void> {
    const made = new Set<string>();
    const makeDirectory = async (relative: string): Promise<void> => {
      if (made.has(relative)) return;
      const parent = path.posix.dirname(relative);
      if (parent !== ".") await makeDirectory(parent);
      const directory = path.join(this.pathOf(runId), relative);
      await mkdir(directory, { mode: 0o755 });
      await chmodNoFollow(directory, 0o755);
      made.add(relative);
    };
    await makeDirectory(top);
    for (const member of members) {
      assertFolderPath(member.path);
      const relative = `${top}/${member.path}`;
      await makeDirectory(path.posix.dirname(relative));
      await this.writeReadOnly(runId, relative, member.content);
    }
  }

  /** A new 0444 file, created with O_EXCL|O_NOFOLLOW so nothing planted can be followed or overwritten. */
  private async writeReadOnly(runId: string, name: string, content: string | Buffer): Promise<void> {
    const names = this.written.get(runId) ?? [];
    if (names.length === 0) this.written.set(runId, names);
    names.push(name);
    const file = await open(
      path.join(this.pathOf(runId), name),
      fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_WRONLY | fsConstants.O_NOFOLLOW,
      0o444,
    );
    try {
      await file.writeFile(content);
    } finally {
      await file.close();
    }
  }

  /** True while the run directory still exists (it is a real directory, not a planted link). */
  async exists(runId: string): Promise<boolean> {
    try {
      return (await lstat(this.pathOf(runId))).isDirectory();
    } catch {
      return false;
    }
  }

  /**
   * True while the run directory exists and still holds every file this process wrote into it.
   * A wipe walks the tree: it unlinks a directory's files before the directory itself, and under
   * load the two steps can be far apart. A skill that failed because its file vanished must read
   * as wiped even while its emptied directory is still there.
   */
  async intact(runId: string): Promise<boolean> {
    if (!(await this.exists(runId))) return false;
    const runDir = this.pathOf(runId);
    for (const name of this.written.get(runId) ?? []) {
      try {
        if (!(await lstat(path.join(runDir, name))).isFile()) return false;
      } catch {
        return false;
      }
    }
    return true;
  }

  /** Removes a run directory without following any link inside it. Missing is fine. */
  async remove(runId: string): Promise<void> {
    this.written.delete(runId);
    // fs.rm lstat()s every entry and unlinks symlinks rather than descending into their targets.
    await rm(this.pathOf(runId), { recursive: true, force: true, maxRetries: 2 });
  }

  /** Removes `runs/` and everything in it; returns how many run directories it held. */
  async wipe(): Promise<number> {
    const count = (await this.list("")).length;
    // Runs keep creating entries while we delete; retrying on ENOTEMPTY is what `rm -rf` users do.
    await rm(this.runsDir, { recursive: true, force: true, maxRetries: 20, retryDelay: 5 });
    return count;
  }

  /** Run ids under `runs/` that start with `prefix` (a previous process of this instance). */
  async list(prefix: string): Promise<string[]> {
    try {
      const entries = await readdir(this.runsDir, { withFileTypes: true });
      return entries.filter((e) => e.name.startsWith(prefix)).map((e) => e.name);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }
}

async function chmodNoFollow(directory: string, mode: number): Promise<void> {
  const handle = await open(directory, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW);
  try {
    await handle.chmod(mode);
  } finally {
    await handle.close();
  }
}

/** A dependency file is a bare `<module>.py` name beside the skill: no path, not the skill's own file. */
function assertExtraFileName(name: string): void {
  if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}\.py$/.test(name) || name === SKILL_FILE_NAME) {
    throw new Error(`invalid run file name ${JSON.stringify(name)}`);
  }
}

/** A folder member or input file: a relative path of plain segments, never `..`, `.` or empty. */
function assertFolderPath(relative: string): void {
  const segments = relative.split("/");
  if (relative.length > 1024 || segments.some((s) => s === "" || s === "." || s === ".." || s.includes("\0"))) {
    throw new Error(`invalid skill folder path ${JSON.stringify(relative)}`);
  }
}

function assertRunId(runId: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/.test(runId)) {
    throw new Error(`invalid run id ${JSON.stringify(runId)}`);
  }
}
