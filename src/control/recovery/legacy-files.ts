import { constants, type Stats } from "node:fs";
import { access, lstat, open, readdir } from "node:fs/promises";
import path from "node:path";
import { errorMessage } from "../../errors/index.js";
import { LIMITS, SKILL_NAME_PATTERN } from "../intake/index.js";
import { isRecord, stringField } from "./lenient-fields.js";

/** The legacy location of skills, relative to `$SKILL_ENGINE_SANDBOX_DIR`. */
export const LEGACY_SKILLS_DIR = "acquired_skills";
const LEGACY_RETIRED_DIR = "retired";
export const LEGACY_INDEX_FILE = "skills_registry.json";
const LEGACY_INDEX_MAX_BYTES = 16 * 1024 * 1024;

/** A legacy file left out, with why (`file` is relative to the legacy directory). */
export interface SkippedFile {
  readonly file: string;
  readonly reason: string;
}

export interface LegacyFile {
  /** Relative to the legacy directory, for the report. */
  readonly file: string;
  readonly name: string;
  readonly code: string;
  readonly bytes: Buffer;
  readonly stats: Stats;
  readonly retiredInLegacy: boolean;
}

/** What the legacy directory holds: its skill files, every `.py` name seen, and the legacy index's entries. */
export interface LegacyContents {
  readonly candidates: LegacyFile[];
  readonly seen: Set<string>;
  readonly index: Map<string, Record<string, unknown>>;
}

/**
 * Reads the legacy directory (and its `retired/`) as hostile: no symlink is followed, a file
 * that fails a check is pushed to `skipped`, unusable index metadata to `warnings`. A skill in
 * both places is taken from the live directory.
 */
export async function readLegacyDirectory(legacyDir: string, skipped: SkippedFile[], warnings: string[]): Promise<LegacyContents> {
  const candidates: LegacyFile[] = [];
  const seen = new Set<string>();
  let index = new Map<string, Record<string, unknown>>();
  const notFollowed = (file: string) => (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ELOOP") throw error;
    skipped.push({ file, reason: "became a symbolic link while being read; not followed" });
  };
  await withDirectoryNoFollow(legacyDir, async (base) => {
    index = await readLegacyIndex(base, warnings);
    candidates.push(...(await readSkillFiles(base, "", skipped, seen)));
    const retiredStat = await lstat(path.join(base, LEGACY_RETIRED_DIR)).catch(() => undefined);
    if (retiredStat?.isSymbolicLink()) {
      skipped.push({ file: `${LEGACY_RETIRED_DIR}/`, reason: "is a symbolic link; not followed" });
    } else if (retiredStat?.isDirectory()) {
      await withDirectoryNoFollow(path.join(base, LEGACY_RETIRED_DIR), async (retiredBase) => {
        for (const file of await readSkillFiles(retiredBase, `${LEGACY_RETIRED_DIR}/`, skipped, seen)) {
          if (candidates.some((c) => c.name === file.name)) {
            skipped.push({ file: file.file, reason: `duplicate of ${file.name}.py, which is migrated instead` });
          } else {
            candidates.push({ ...file, retiredInLegacy: true });
          }
        }
      }).catch(notFollowed(`${LEGACY_RETIRED_DIR}/`));
    }
  }).catch(notFollowed("."));
  return { candidates, seen, index };
}

/**
 * Opens a directory without following a symlink and runs `work` on a path that resolves to the
 * opened directory itself (Linux `/proc/self/fd/N`), so a rename race cannot swap it under us.
 */
async function withDirectoryNoFollow(directory: string, work: (base: string) => Promise<void>): Promise<void> {
  const handle = await open(directory, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const pinned = `/proc/self/fd/${handle.fd}`;
    const base = (await access(pinned).then(
      () => true,
      () => false,
    ))
      ? pinned
      : directory;
    await work(base);
  } finally {
    await handle.close();
  }
}

async function readSkillFiles(base: string, prefix: string, skipped: SkippedFile[], seen: Set<string>): Promise<LegacyFile[]> {
  const found: LegacyFile[] = [];
  for (const entry of await readdir(base, { withFileTypes: true })) {
    if (!entry.name.endsWith(".py")) continue;
    const file = `${prefix}${entry.name}`;
    const name = entry.name.slice(0, -".py".length);
    seen.add(name);
    const skip = (reason: string): void => {
      skipped.push({ file, reason });
    };
    if (entry.isSymbolicLink()) {
      skip("is a symbolic link; not followed");
      continue;
    }
    if (!entry.isFile()) {
      skip("is not a regular file");
      continue;
    }
    if (!SKILL_NAME_PATTERN.test(name)) {
      skip("is not a valid skill name: use 1-64 letters, digits, '_' or '-', starting with a letter or '_'");
      continue;
    }
    if (/^__\w*__$/.test(name)) {
      skip("is a Python module marker, not a skill");
      continue;
    }
    const read = await readRegularFile(path.join(base, entry.name), LIMITS.codeBytes);
    if ("skip" in read) {
      skip(read.skip);
      continue;
    }
    let code: string;
    try {
      // ignoreBOM keeps the bytes exactly as they were, so the hash is the file's own.
      code = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(read.bytes);
    } catch {
      skip("is not valid UTF-8");
      continue;
    }
    if (code.includes("\0")) {
      skip("contains a NUL byte; Python source cannot");
      continue;
    }
    if (code.trim() === "") {
      skip("is empty");
      continue;
    }
    found.push({ file, name, code, bytes: read.bytes, stats: read.stats, retiredInLegacy: false });
  }
  return found;
}

/** Reads a regular file without following a symlink and without reading past `limit` bytes. */
async function readRegularFile(
  file: string,
  limit: number,
): Promise<{ bytes: Buffer; stats: Stats } | { skip: string; missing?: boolean }> {
  let handle;
  try {
    // O_NONBLOCK: a FIFO planted under a .py name must not hang start-up.
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return { skip: "is a symbolic link; not followed" };
    if (code === "ENOENT") return { skip: "does not exist", missing: true };
    return { skip: `cannot be opened: ${code ?? String(error)}` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { skip: "is not a regular file" };
    if (stats.size > limit) return { skip: `is ${stats.size} bytes; the limit is ${limit}` };
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > limit) return { skip: `grew past ${limit} bytes while being read` };
    }
    return { bytes: buffer.subarray(0, length), stats };
  } finally {
    await handle.close();
  }
}

/**
 * The legacy `skills_registry.json`, whatever its shape: an object keyed by name,
 * `{skills: [...]}`, `{skills: {...}}` or a bare array. Unreadable means "no metadata".
 */
async function readLegacyIndex(base: string, warnings: string[]): Promise<Map<string, Record<string, unknown>>> {
  const entries = new Map<string, Record<string, unknown>>();
  const read = await readRegularFile(path.join(base, LEGACY_INDEX_FILE), LEGACY_INDEX_MAX_BYTES);
  if ("skip" in read) {
    if (!read.missing) warnings.push(`legacy ${LEGACY_INDEX_FILE} ${read.skip}; defaults used for every skill`);
    return entries;
  }
  let document: unknown;
  try {
    document = JSON.parse(read.bytes.toString("utf8"));
  } catch (error) {
    warnings.push(`legacy ${LEGACY_INDEX_FILE} is not valid JSON (${errorMessage(error)}); defaults used for every skill`);
    return entries;
  }
  const add = (key: string | undefined, value: unknown): void => {
    if (!isRecord(value)) return;
    const name = (key ?? stringField(value, ["name", "skill_name", "skillName"]))?.replace(/\.py$/, "");
    if (name !== undefined && name !== "") entries.set(name, value);
  };
  const container = isRecord(document) && "skills" in document ? document.skills : document;
  if (Array.isArray(container)) {
    for (const value of container) add(undefined, value);
  } else if (isRecord(container) && (container !== document || looksKeyedByName(container))) {
    for (const [key, value] of Object.entries(container)) add(key, value);
  } else if (isRecord(container)) {
    // `{"skills": ...}` whose value is not a list or map of entries: a skill called "skills".
    for (const [key, value] of Object.entries(document as Record<string, unknown>)) add(key, value);
  } else {
    warnings.push(`legacy ${LEGACY_INDEX_FILE} holds neither a list nor a map of skills; defaults used for every skill`);
  }
  return entries;
}

function looksKeyedByName(value: Record<string, unknown>): boolean {
  return Object.values(value).every(isRecord);
}
