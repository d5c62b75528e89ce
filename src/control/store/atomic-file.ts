import { randomBytes } from "node:crypto";
import { open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/** Prefix of in-progress temp files; start-up reconciliation removes any a crash left behind. */
export const TEMP_FILE_PREFIX = ".tmp-";

/**
 * Replaces `target` with `content` so that a crash at any moment leaves either the old file or
 * the new one, never a torn mix: write a temp file beside it, fsync, rename over, fsync the
 * directory so the rename itself is durable.
 */
export async function writeFileAtomic(target: string, content: string | Buffer): Promise<void> {
  const directory = path.dirname(target);
  const temp = path.join(directory, `${TEMP_FILE_PREFIX}${path.basename(target)}-${randomBytes(6).toString("hex")}`);
  const handle = await open(temp, "wx", 0o644);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  try {
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(directory);
}

export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
