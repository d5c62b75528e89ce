import { lstat } from "node:fs/promises";

/** True when something (a file, a directory, a link — never followed) is at `file`. */
export async function pathExists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}
