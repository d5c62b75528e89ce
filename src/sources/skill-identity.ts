import { randomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, readFile } from "node:fs/promises";
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
 * symlink and created exclusively (a racing discovery keeps the first id). A folder that cannot
 * be written keeps the id `remembered` gives (the registry's), or a new one, and reports it.
 */
export async function readOrCreateSkillId(skillDir: string, name: string, remembered?: string): Promise<SkillIdentity> {
  const file = path.join(skillDir, SKILL_ID_FILE);
  const existing = await readSidecar(file);
  if (existing !== undefined) return { id: existing, persisted: true, note: undefined };
  const id = remembered ?? `${name}__imp_${randomBytes(4).toString("hex")}`;
  try {
    const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      await handle.writeFile(`${id}\n`, "utf8");
    } finally {
      await handle.close();
    }
    return { id, persisted: true, note: undefined };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EEXIST") {
      const raced = await readSidecar(file);
      if (raced !== undefined) return { id: raced, persisted: true, note: undefined };
    }
    return { id, persisted: false, note: `cannot write ${SKILL_ID_FILE} (${code ?? "error"}); the id is kept in the registry` };
  }
}

async function readSidecar(file: string): Promise<string | undefined> {
  let text: string;
  try {
    const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = await handle.readFile("utf8");
    } finally {
      await handle.close();
    }
  } catch {
    return undefined;
  }
  const id = text.trim();
  return SKILL_ID_PATTERN.test(id) ? id : undefined;
}

/** For tests and tools: the sidecar's content, if any. */
export async function sidecarOf(skillDir: string): Promise<string | undefined> {
  return readFile(path.join(skillDir, SKILL_ID_FILE), "utf8").then(
    (text) => text.trim(),
    () => undefined,
  );
}
