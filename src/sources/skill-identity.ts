import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";

/** The sidecar beside SKILL.md that holds a directory skill's id (docs/skill-sources.md#identity). */
export const SKILL_ID_FILE = ".skill_id";
const SKILL_ID_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]{0,63}__[A-Za-z0-9_]{1,40}$/;

export interface SkillIdentity {
  readonly id: string;
  /** False when the folder is read-only: the id lives in the registry instead, and this says so. */
  readonly persisted: boolean;
  readonly note: string | undefined;
}

/**
 * Reads the `.skill_id` sidecar, or creates it as `{name}__imp_{8 hex}` on first discovery and
 * never again, so the id survives moves and restarts. The sidecar is read without following a
 * symlink and created exclusively (a racing discovery keeps the first id). A sidecar that is empty
 * or holds no valid id is repaired: replaced (a new file renamed over it) with the id `remembered`
 * gives (the registry's) or a new one, and the note says so. A folder that cannot be written keeps
 * that id and reports it (docs/skill-sources.md#identity).
 */
export async function readOrCreateSkillId(skillDir: string, name: string, remembered?: string): Promise<SkillIdentity> {
  const file = path.join(skillDir, SKILL_ID_FILE);
  const existing = await readSidecar(file);
  if (existing.id !== undefined) return { id: existing.id, persisted: true, note: undefined };
  const id = remembered ?? `${name}__imp_${randomBytes(4).toString("hex")}`;
  if (existing.invalid !== undefined) return repairSidecar(skillDir, file, id, existing.invalid);
  try {
    await writeExclusive(file, id);
    return { id, persisted: true, note: undefined };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      const raced = await readSidecar(file);
      if (raced.id !== undefined) return { id: raced.id, persisted: true, note: undefined };
      if (raced.invalid !== undefined) return repairSidecar(skillDir, file, id, raced.invalid);
    }
    return { id, persisted: false, note: `cannot write ${SKILL_ID_FILE} (${code ?? "error"}); the id is kept in the registry` };
  }
}

/** Replaces an empty or invalid sidecar: a new file beside it, renamed over it (a rename never follows a link). */
async function repairSidecar(skillDir: string, file: string, id: string, invalid: string): Promise<SkillIdentity> {
  const what = invalid === "" ? "was empty" : `held no valid id ("${invalid.slice(0, 40)}")`;
  const temp = path.join(skillDir, `${SKILL_ID_FILE}.tmp-${randomBytes(4).toString("hex")}`);
  try {
    await writeExclusive(temp, id);
    await rename(temp, file);
    return { id, persisted: true, note: `repaired ${SKILL_ID_FILE}: it ${what}; wrote ${id}` };
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    const code = (error as NodeJS.ErrnoException).code ?? "error";
    return {
      id,
      persisted: false,
      note: `cannot repair ${SKILL_ID_FILE}: it ${what} and cannot be rewritten (${code}); the id is kept in the registry`,
    };
  }
}

async function writeExclusive(file: string, id: string): Promise<void> {
  const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
  try {
    await handle.writeFile(`${id}\n`, "utf8");
  } finally {
    await handle.close();
  }
}

/** The sidecar's id; `invalid` holds what an empty or malformed one says; neither when there is none (or it cannot be read). */
async function readSidecar(file: string): Promise<{ id?: string; invalid?: string }> {
  let text: string;
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return {};
  }
  const id = text.trim();
  return SKILL_ID_PATTERN.test(id) ? { id } : { invalid: id };
}

/** For tests and tools: the sidecar's content, if any. */
export async function sidecarOf(skillDir: string): Promise<string | undefined> {
  return readFile(path.join(skillDir, SKILL_ID_FILE), "utf8").then(
    (text) => text.trim(),
    () => undefined,
  );
}
