import { randomBytes } from "node:crypto";
import { link, open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/** Mode of every file the secrets room writes: the service's user alone reads and writes it. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Replaces `target` with `content` so that a crash at any moment leaves the old file or the new one, never a torn
 * mix, and never a moment where the file is readable by anybody but the service's user: a temp file created 0600
 * beside it, fsynced, renamed over it, then the directory fsynced so the rename itself is durable.
 */
export async function writePrivateFileAtomic(target: string, content: Buffer | string): Promise<void> {
  const temp = await stagePrivateFile(target, content);
  try {
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await syncDirectory(path.dirname(target));
}

/**
 * Creates `target` with `content` only when nothing is there yet (a hard link of a complete, fsynced temp file:
 * no reader ever sees it half written). Answers false, leaving what is there, when something is.
 */
export async function createPrivateFile(target: string, content: Buffer): Promise<boolean> {
  const temp = await stagePrivateFile(target, content);
  try {
    await link(temp, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await unlink(temp).catch(() => undefined);
  }
  await syncDirectory(path.dirname(target));
  return true;
}

/** Renames `from` over `to` (same directory) and makes the rename durable. */
export async function renameDurably(from: string, to: string): Promise<void> {
  await rename(from, to);
  await syncDirectory(path.dirname(to));
}

/** Removes `file` when it is there, durably. */
export async function removeDurably(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  await syncDirectory(path.dirname(file));
}

async function stagePrivateFile(target: string, content: Buffer | string): Promise<string> {
  const temp = path.join(path.dirname(target), `.tmp-${path.basename(target)}-${randomBytes(6).toString("hex")}`);
  const handle = await open(temp, "wx", PRIVATE_FILE_MODE);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return temp;
}

async function syncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
