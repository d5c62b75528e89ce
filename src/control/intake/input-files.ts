import { InvalidArgumentError } from "../../errors/index.js";
import type { RunInputFile } from "../../execution/index.js";

/** How many files a run may be handed and how many bytes together (docs/files.md#input-files). */
export interface InputFileLimits {
  readonly maxFiles: number;
  readonly maxTotalBytes: number;
}

/** Longest path of an input file, in characters, and longest name within it, in bytes (Linux's NAME_MAX). */
const MAX_PATH_LENGTH = 1024;
const MAX_NAME_BYTES = 255;

/**
 * Checks the files a call hands a run (InvokeSkill's `files`, RegisterSkill's `test_files`) against
 * docs/files.md#input-files: each path relative and made of ordinary names, no two files at the same
 * path or one file where another needs a directory, and the count and total within the limits.
 * Throws `InvalidArgumentError` naming the file and the rule; returns the files as the runner takes them.
 */
export function validateInputFiles(
  field: string,
  files: readonly { readonly path: string; readonly content: Uint8Array }[],
  limits: InputFileLimits,
): RunInputFile[] {
  if (files.length > limits.maxFiles) {
    throw new InvalidArgumentError(
      field,
      `${files.length} files, more than the ${limits.maxFiles} a run may take (SKILL_ENGINE_INPUT_FILES_MAX)`,
    );
  }
  let total = 0;
  const taken = new Map<string, number>();
  const directories = new Set<string>();
  const result: RunInputFile[] = [];
  for (const [index, file] of files.entries()) {
    const where = `${field}[${index}] (${JSON.stringify(file.path.slice(0, 200))})`;
    const problem = pathProblem(file.path);
    if (problem) throw new InvalidArgumentError(where, problem);
    const earlier = taken.get(file.path);
    if (earlier !== undefined) throw new InvalidArgumentError(where, `the same path as ${field}[${earlier}]`);
    if (directories.has(file.path)) throw new InvalidArgumentError(where, "another file's path has this one as a directory");
    const segments = file.path.split("/");
    for (let depth = 1; depth < segments.length; depth++) {
      const parent = segments.slice(0, depth).join("/");
      const clash = taken.get(parent);
      if (clash !== undefined) throw new InvalidArgumentError(where, `its directory ${parent} is the file ${field}[${clash}]`);
      directories.add(parent);
    }
    taken.set(file.path, index);
    total += file.content.byteLength;
    if (total > limits.maxTotalBytes) {
      throw new InvalidArgumentError(
        where,
        `brings the files to ${total} bytes, more than the ${limits.maxTotalBytes} a run may take together (SKILL_ENGINE_INPUT_FILES_MB)`,
      );
    }
    result.push({ path: file.path, content: Buffer.from(file.content.buffer, file.content.byteOffset, file.content.byteLength) });
  }
  return result;
}

/** Why `relative` is not a path of ordinary names, or undefined when it is one. */
function pathProblem(relative: string): string | undefined {
  if (relative.length === 0) return "a path is required";
  if (relative.length > MAX_PATH_LENGTH) return `a path may be at most ${MAX_PATH_LENGTH} characters`;
  if (relative.startsWith("/")) return "a path must be relative (it is placed under /sandbox/in/)";
  if (/\p{Cc}/u.test(relative)) return "a path may not contain control characters (newlines, tabs, NUL)";
  if (/\p{Cs}/u.test(relative)) return "a path must be valid UTF-8";
  for (const segment of relative.split("/")) {
    if (segment === "") return "a path may not have empty segments (// or a trailing /)";
    if (segment === "." || segment === "..") return "a path may not contain '.' or '..' segments";
    if (Buffer.byteLength(segment) > MAX_NAME_BYTES) return `each name in a path may be at most ${MAX_NAME_BYTES} bytes`;
  }
  return undefined;
}
