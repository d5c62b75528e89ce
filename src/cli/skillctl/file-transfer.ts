import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { lstat, mkdir, open, readFile, rename, unlink } from "node:fs/promises";
import path from "node:path";
import type { InputFile, OutputFile } from "../../gen/skillengine/v1/execution.js";
import { errorMessage } from "../../errors/index.js";
import { UsageError } from "./args.js";
import type { CommandContext } from "./commands.js";
import { table } from "./format.js";
import { byteSize } from "../../units/index.js";

/**
 * Files to and from a run, on the operator's side (docs/operations.md#files-in-and-out): `--file` values
 * read into InputFiles, and returned OutputFiles written under `--out`. What comes back is what a skill
 * wrote, so it is written as untrusted: no path leaves the folder, no link is followed, nothing is
 * overwritten unless asked, and even then a file is replaced, never written through.
 */

/**
 * `<sandbox-path>=<local-path>` (the first `=` separates them) or a bare `<local-path>`, which goes to
 * the sandbox under its base name. The service checks the paths and limits (docs/files.md#input-files).
 */
export async function readInputFiles(values: readonly string[], option: string, command: string): Promise<InputFile[]> {
  const files: InputFile[] = [];
  for (const value of values) {
    const split = value.indexOf("=");
    const local = split < 0 ? value : value.slice(split + 1);
    const sandboxPath = split < 0 ? path.basename(local) : value.slice(0, split);
    if (local === "" || sandboxPath === "")
      throw new UsageError(`${option} takes <sandbox-path>=<local-path> (or a local path alone), got '${value}'`, command);
    let content: Buffer;
    try {
      content = await readFile(local);
    } catch (error) {
      throw new UsageError(`cannot read ${option} ${value}: ${errorMessage(error)}`, command);
    }
    files.push({ path: sandboxPath, content });
  }
  return files;
}

/** One returned file: where it went, or why it did not. */
export interface FileOutcome {
  readonly file: OutputFile;
  /** The local path written; absent when the file was not written. */
  readonly writtenTo?: string;
  readonly refused?: string;
}

/**
 * Writes each file under `dir` (created if missing) at its path, in the order given. A file that cannot
 * be written safely is refused with the reason and the others still go; see docs/operations.md#files-in-and-out.
 */
export async function writeOutputFiles(dir: string, files: readonly OutputFile[], force: boolean): Promise<FileOutcome[]> {
  if (files.length > 0) await mkdir(dir, { recursive: true });
  const root = path.resolve(dir);
  const outcomes: FileOutcome[] = [];
  for (const file of files) {
    try {
      outcomes.push({ file, writtenTo: await writeOne(root, file, force) });
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      outcomes.push({ file, refused: error.message });
    }
  }
  return outcomes;
}

class Refused extends Error {}

/** Why a returned path may not be written as is, or undefined. The service checks the same, but the CLI trusts no answer. */
export function unsafeOutputPath(relative: string): string | undefined {
  if (relative === "") return "an empty path";
  if (relative.startsWith("/") || path.isAbsolute(relative)) return "an absolute path";
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(relative)) return "a control character in the path";
  for (const segment of relative.split("/")) {
    if (segment === "") return "an empty segment in the path";
    if (segment === "." || segment === "..") return `a '${segment}' segment in the path`;
  }
  return undefined;
}

async function writeOne(root: string, file: OutputFile, force: boolean): Promise<string> {
  const problem = unsafeOutputPath(file.path);
  const target = path.resolve(root, file.path);
  if (problem !== undefined) throw new Refused(problem);
  if (!target.startsWith(root + path.sep)) throw new Refused(`it would land outside ${root}`);
  // Each directory on the way is made or checked without following a link (mkdir never follows one).
  let directory = root;
  for (const segment of path
    .relative(root, path.dirname(target))
    .split(path.sep)
    .filter((s) => s !== "")) {
    directory = path.join(directory, segment);
    await ensureDirectory(directory);
  }
  if (!force) {
    await writeExclusive(target, file.content, "exists; not overwritten (--force replaces it)");
    return target;
  }
  const existing = await lstat(target).catch(ignoreMissing);
  if (existing?.isDirectory()) throw new Refused(`${target} is a directory`);
  // Replaced by a rename: a link or a hard-linked file at the target is swapped out, never written through.
  const temporary = path.join(path.dirname(target), `.${path.basename(target)}.skillctl-${randomBytes(6).toString("hex")}`);
  await writeExclusive(temporary, file.content, "a temporary file of that name exists");
  try {
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw new Refused(errorMessage(error));
  }
  return target;
}

async function ensureDirectory(directory: string): Promise<void> {
  const found = await lstat(directory).catch(ignoreMissing);
  if (found === undefined) {
    try {
      await mkdir(directory);
      return;
    } catch (error) {
      throw new Refused(`cannot make the directory ${directory}: ${errorMessage(error)}`);
    }
  }
  if (found.isSymbolicLink()) throw new Refused(`${directory} is a symbolic link; not followed`);
  if (!found.isDirectory()) throw new Refused(`${directory} is not a directory`);
}

/** O_CREAT|O_EXCL|O_NOFOLLOW: a new file or nothing (an existing link, even a dangling one, is EEXIST). */
async function writeExclusive(target: string, content: Uint8Array, whenExists: string): Promise<void> {
  let handle;
  try {
    handle = await open(target, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o666);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new Refused(code === "EEXIST" ? `${target} ${whenExists}` : errorMessage(error));
  }
  try {
    await handle.writeFile(content);
  } catch (error) {
    await handle.close().catch(() => undefined);
    // The file is ours (made just now): a half-written one is not left behind.
    await unlink(target).catch(() => undefined);
    throw new Refused(errorMessage(error));
  }
  await handle.close();
}

function ignoreMissing(error: unknown): undefined {
  if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
  throw new Refused(errorMessage(error));
}

/**
 * Writes a run's returned files under `--out` when given, and says what came back: one line a file
 * (where it was written or its path, size, media type, whether it came back whole) in `lines`, for the
 * command to print where its output goes; each refused file on stderr at once. With --json, `lines` is
 * empty: the outcomes go into its answer (fileJson).
 */
export async function deliverFiles(
  ctx: CommandContext,
  files: readonly OutputFile[],
): Promise<{ outcomes: FileOutcome[]; refused: number; lines: string }> {
  const out = ctx.options.out;
  const outcomes: FileOutcome[] =
    typeof out === "string" ? await writeOutputFiles(out, files, ctx.options.force === true) : files.map((file) => ({ file }));
  let lines = "";
  if (!ctx.json) {
    const rows = outcomes
      .filter((o) => o.refused === undefined)
      .map(({ file, writtenTo }) => [
        writtenTo === undefined ? `returned ${file.path}` : `wrote ${writtenTo}`,
        byteSize(file.sizeBytes),
        file.mediaType,
        file.truncated ? `truncated: only the first ${byteSize(file.content.length)} came back` : "",
      ]);
    lines = table(rows);
    if (typeof out !== "string" && files.length > 0) lines += "(--out DIR writes the returned files)\n";
  }
  for (const { file, refused } of outcomes) if (refused !== undefined) ctx.io.err(`skillctl: not written: ${file.path}: ${refused}\n`);
  return { outcomes, refused: outcomes.filter((o) => o.refused !== undefined).length, lines };
}

/** A file for --json: the bytes in base64 (left out once written to disk), and where they went. */
export function fileJson(outcome: FileOutcome): unknown {
  const { file } = outcome;
  const wrote = outcome.writtenTo !== undefined || outcome.refused !== undefined;
  return {
    path: file.path,
    sizeBytes: file.sizeBytes,
    sha256: file.sha256,
    mediaType: file.mediaType,
    truncated: file.truncated,
    ...(wrote
      ? { writtenTo: outcome.writtenTo ?? null, refused: outcome.refused ?? null }
      : { content: Buffer.from(file.content).toString("base64") }),
  };
}
