import { createHash } from "node:crypto";
import { lookup } from "mime-types";
import { z } from "zod";
import type { OutputFileLimits, RunOutputFile } from "../sandbox-runner.js";
import type { FilesFrame } from "./files-frame-filter.js";

/** What the run handed back under `/sandbox/out/`, what did not come back and why, and whether the space was full. */
export interface OutputFilesReading {
  readonly files: RunOutputFile[];
  readonly warnings: string[];
  /** The output space had no room left when the skill ended (docs/files.md#output-files). */
  readonly full: boolean;
}

const manifestSchema = z.object({
  files: z.array(
    z.object({
      path: z.string(),
      size: z.number().int().min(0),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      inline: z.number().int().min(0),
    }),
  ),
  skipped: z.array(z.object({ path: z.string(), kind: z.string().max(64) })),
  skipped_count: z.number().int().min(0),
  more: z.number().int().min(0),
  full: z.boolean(),
});

/** Longest path of a returned file, in characters. */
const MAX_PATH_LENGTH = 1024;

/**
 * Reads the entry script's files frame. Everything in it is the skill's word, so nothing is trusted:
 * the manifest must parse; each path must be a plain relative path (no `.`/`..`/empty segment, no
 * control character, valid UTF-8) or the file is skipped with a warning; the inline bytes must add
 * up to the data that came and stay within the limits; a complete file's digest is computed here and
 * a file whose bytes do not match the sandbox's digest is dropped (a process of the skill wrote to
 * stdout while the frame went out). The host reads no file system for any of this.
 */
export function readOutputFiles(frame: FilesFrame | undefined, limits: OutputFileLimits): OutputFilesReading {
  if (!frame) return { files: [], warnings: [], full: false };
  if (frame.kind === "oversized") {
    return {
      files: [],
      warnings: [
        `the run's output files did not come back: their frame claimed ${frame.dataBytes} bytes, more than the ${limits.maxTotalBytes} returned inline (something other than the sandbox's entry script wrote it)`,
      ],
      full: false,
    };
  }
  let manifest: z.infer<typeof manifestSchema>;
  try {
    manifest = manifestSchema.parse(JSON.parse(frame.manifest.toString("utf8")));
  } catch {
    return { files: [], warnings: ["the run's output files did not come back: their manifest was malformed"], full: false };
  }
  const files: RunOutputFile[] = [];
  const warnings: string[] = [];
  let offset = 0;
  let inlineTotal = 0;
  for (const entry of manifest.files) {
    const start = offset;
    offset += entry.inline;
    if (offset > frame.data.length) {
      warnings.push("the run's output files came back cut short: the rest were dropped");
      break;
    }
    const problem = pathProblem(entry.path);
    if (problem) {
      warnings.push(`skipped an output file whose name ${problem}: ${JSON.stringify(entry.path.slice(0, 200))}`);
      continue;
    }
    const complete = entry.inline === entry.size;
    if (entry.inline > entry.size || entry.inline > limits.maxFileBytes || inlineTotal + entry.inline > limits.maxTotalBytes) {
      warnings.push(`skipped output file ${entry.path}: its inline size is past the limits`);
      continue;
    }
    const content = frame.data.subarray(start, offset);
    if (complete && sha256(content) !== entry.sha256) {
      warnings.push(
        `skipped output file ${entry.path}: its bytes came back garbled (a process the skill left running wrote to stdout as the files went out)`,
      );
      continue;
    }
    inlineTotal += entry.inline;
    if (!complete) {
      warnings.push(
        `output file ${entry.path} is ${entry.size} bytes; its first ${entry.inline} came back (limits: ${limits.maxFileBytes} bytes a file, ${limits.maxTotalBytes} in all)`,
      );
    }
    files.push({
      path: entry.path,
      sizeBytes: entry.size,
      sha256: entry.sha256,
      // A view, not a copy: the frame's data buffer is this run's alone (files-frame-filter.ts).
      content,
      truncated: !complete,
      mediaType: mediaTypeOf(entry.path),
    });
  }
  for (const skipped of manifest.skipped) {
    const shown = pathProblem(skipped.path) ? JSON.stringify(skipped.path.slice(0, 200)) : skipped.path;
    warnings.push(`skipped ${shown} under /sandbox/out: a ${safeKind(skipped.kind)}, not a regular file`);
  }
  const unlisted = manifest.skipped_count - manifest.skipped.length;
  if (unlisted > 0) warnings.push(`skipped ${unlisted} more entries under /sandbox/out that are not regular files`);
  if (manifest.more > 0) {
    warnings.push(
      `${manifest.more} more output files were not returned: at most ${limits.maxFiles} come back (SKILL_ENGINE_OUTPUT_FILES_MAX)`,
    );
  }
  return { files, warnings, full: manifest.full };
}

/** Why `relative` is not a plain relative path, or undefined when it is one. */
function pathProblem(relative: string): string | undefined {
  if (relative.length === 0 || relative.length > MAX_PATH_LENGTH) return `is empty or longer than ${MAX_PATH_LENGTH} characters`;
  if (/\p{Cs}/u.test(relative)) return "is not valid UTF-8";
  if (/[\p{Cc}]/u.test(relative)) return "holds a control character";
  if (relative.split("/").some((segment) => segment === "" || segment === "." || segment === "..")) {
    return "has an empty, '.' or '..' segment";
  }
  return undefined;
}

/** The manifest's kind of a skipped entry, shown only when it is one the entry script writes. */
function safeKind(kind: string): string {
  return /^[a-z ]{1,40}$/.test(kind) ? kind : "special file";
}

function sha256(bytes: Buffer): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** The media type a file's extension names; `application/octet-stream` when it names none. */
export function mediaTypeOf(relative: string): string {
  return lookup(relative) || "application/octet-stream";
}
