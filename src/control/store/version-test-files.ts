import { createHash, randomBytes } from "node:crypto";
import { constants, type Dirent } from "node:fs";
import { lstat, mkdir, open, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import type { TestFileEntry } from "../registry/index.js";
import { fsyncDirectory, TEMP_FILE_PREFIX } from "./atomic-file.js";

/**
 * A version's test files in the canonical store (docs/files.md#test-files): one directory,
 * `.versions/<name>/<n>.test-files/`, holding each file at its relative path, 0444. Written whole
 * under a temp name and renamed into place (so a crash leaves all of them or none), and read back
 * without following any link, each file checked against the size and SHA-256 the registry lists.
 */

/** One test file with its bytes: what a run is handed under /sandbox/in/. */
export interface StoredTestFile {
  readonly path: string;
  readonly content: Buffer;
}

/** Files read back from a test-files directory, and what was wrong with the others (each "path: problem"). */
export interface TestFilesReading {
  readonly files: StoredTestFile[];
  readonly problems: string[];
}

/** The suffix of a version's test-files directory beside its `<n>.py`. */
export const TEST_FILES_SUFFIX = ".test-files";

/** At most this many entries are looked at when a directory is listed without a registry's list (a rebuild). */
const MAX_LISTED_ENTRIES = 10_000;

const sha256 = (content: Buffer): string => createHash("sha256").update(content).digest("hex");

/** The registry's listing of one file: path, size and digest of its bytes. */
export function testFileEntry(file: StoredTestFile): TestFileEntry {
  return { path: file.path, sizeBytes: file.content.length, sha256: sha256(file.content) };
}

/**
 * Why `relative` cannot name a file inside a test-files directory, or undefined. The intake has
 * checked every path a caller sent (docs/files.md#input-files); this guards what a hand-edited
 * mirror may hold, so no read or write ever leaves the directory.
 */
export function testFilePathProblem(relative: string): string | undefined {
  if (relative === "" || relative.startsWith("/") || relative.includes("\0")) return "not a relative path";
  for (const segment of relative.split("/")) {
    if (segment === "" || segment === "." || segment === "..") return "not a path of ordinary names";
  }
  return undefined;
}

/**
 * Writes `files` as the test-files directory `target`: every file is created (never opened
 * through an existing name or link), written, fsynced and made 0444 inside a fresh temp directory
 * beside `target`, which is then renamed to `target`. Whatever is at `target` already belongs to
 * no committed version (the caller writes a number the registry has not committed) and is removed
 * first. On failure nothing is left behind.
 */
export async function writeTestFilesAt(target: string, files: readonly StoredTestFile[]): Promise<TestFileEntry[]> {
  const parent = path.dirname(target);
  const temp = path.join(parent, `${TEMP_FILE_PREFIX}${path.basename(target)}-${randomBytes(6).toString("hex")}`);
  await mkdir(temp, { mode: 0o700 });
  try {
    const directories = new Set<string>([temp]);
    for (const file of files) {
      const problem = testFilePathProblem(file.path);
      if (problem) throw new Error(`test file ${JSON.stringify(file.path)}: ${problem}`);
      let directory = temp;
      for (const segment of file.path.split("/").slice(0, -1)) {
        directory = path.join(directory, segment);
        if (directories.has(directory)) continue;
        await mkdir(directory, { mode: 0o700 });
        directories.add(directory);
      }
    }
    await Promise.all(files.map((file) => createReadOnly(path.join(temp, ...file.path.split("/")), file.content)));
    await Promise.all([...directories].map((directory) => fsyncDirectory(directory)));
    await rm(target, { recursive: true, force: true });
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(parent);
  return files.map(testFileEntry);
}

/** Creates `file` (O_EXCL, never through a link), writes and fsyncs `content`; the file is 0444 from its creation. */
async function createReadOnly(file: string, content: Buffer): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o444);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Reads the files `entries` list from the test-files directory `root`, in their order. Nothing is
 * followed: every directory on a file's way must be a directory (checked with lstat), the file is
 * opened with O_NOFOLLOW (and O_NONBLOCK, so a FIFO cannot hold the read) and must be a regular
 * file of the listed size and SHA-256. A file that is not is left out and named in `problems`.
 */
export async function readTestFilesAt(root: string, entries: readonly TestFileEntry[]): Promise<TestFilesReading> {
  const files: StoredTestFile[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    const read = await readOne(root, entry.path, entry);
    if (typeof read === "string") problems.push(`${entry.path}: ${read}`);
    else files.push({ path: entry.path, content: read });
  }
  return { files, problems };
}

/** One file's bytes, or what is wrong with it; `expected` (size and digest) is checked when given. */
async function readOne(root: string, relative: string, expected?: Omit<TestFileEntry, "path">): Promise<Buffer | string> {
  const problem = testFilePathProblem(relative);
  if (problem) return problem;
  const segments = relative.split("/");
  let directory = root;
  for (const segment of ["", ...segments.slice(0, -1)]) {
    directory = path.join(directory, segment);
    const found = await lstat(directory).catch(() => undefined);
    if (!found) return "missing";
    if (!found.isDirectory()) return found.isSymbolicLink() ? "a link is on its way (not followed)" : "missing";
  }
  let handle;
  try {
    handle = await open(path.join(root, ...segments), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    if (code === "ELOOP") return "a link, not a file (not followed)";
    return `cannot be read (${code ?? String(error)})`;
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return "not a regular file";
    if (expected && stats.size !== expected.sizeBytes) return `altered (${stats.size} bytes; ${expected.sizeBytes} recorded)`;
    const content = await handle.readFile();
    if (expected && (content.length !== expected.sizeBytes || sha256(content) !== expected.sha256)) {
      return "altered (its SHA-256 is not the one recorded)";
    }
    return content;
  } finally {
    await handle.close();
  }
}

/**
 * The regular files under the test-files directory `root` when no list of them survived (a
 * rebuild whose mirror does not record the version), by path: every entry looked at without
 * following it; links and anything else that is neither a directory nor a regular file are left
 * out and named in `problems`. Undefined when there is no such directory.
 */
export async function listTestFilesAt(root: string): Promise<TestFilesReading | undefined> {
  const top = await lstat(root).catch(() => undefined);
  if (!top?.isDirectory()) return undefined;
  const paths: string[] = [];
  const problems: string[] = [];
  const pending: string[] = [""];
  let seen = 0;
  while (pending.length > 0 && seen <= MAX_LISTED_ENTRIES) {
    const relative = pending.pop() as string;
    const entries: Dirent[] = await readdir(path.join(root, relative), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (++seen > MAX_LISTED_ENTRIES) break;
      const child = relative === "" ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) pending.push(child);
      else if (entry.isFile()) paths.push(child);
      else problems.push(`${child}: ${entry.isSymbolicLink() ? "a link" : "not a regular file"} (left out, not followed)`);
    }
  }
  if (seen > MAX_LISTED_ENTRIES) problems.push(`more than ${MAX_LISTED_ENTRIES} entries; the rest left out`);
  const files: StoredTestFile[] = [];
  for (const relative of paths.sort()) {
    const read = await readOne(root, relative);
    if (typeof read === "string") problems.push(`${relative}: ${read}`);
    else files.push({ path: relative, content: read });
  }
  return { files, problems };
}
