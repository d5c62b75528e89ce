import { chmod, lstat, readdir } from "node:fs/promises";
import path from "node:path";

/** What a walk of a finished environment found. */
export interface TreeSummary {
  /** Bytes of regular files and symbolic links (their own size, never their target's). */
  readonly bytes: number;
  /** Directories (relative to the walked root) holding a shared library `lib*.so*` outside Python's package folders. */
  readonly libraryDirs: readonly string[];
}

/** Library directories put on LD_LIBRARY_PATH at most (docs/packages.md#layout). */
const MAX_LIBRARY_DIRS = 32;
const SHARED_LIBRARY = /^lib.+\.so(\.\d+)*$/;

/**
 * Walks an environment without following a symbolic link (a Debian package's links may point
 * anywhere, meaningful only inside the container), makes it readable by every user and writable by
 * none but its owner (the sandbox's user is not the service's; setuid and setgid bits are dropped),
 * and measures it.
 */
export async function settleTree(root: string): Promise<TreeSummary> {
  let bytes = 0;
  const libraryDirs = new Set<string>();
  const pending = [root];
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    await chmod(dir, 0o755);
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isSymbolicLink()) {
        bytes += (await lstat(full)).size;
      } else if (entry.isDirectory()) {
        pending.push(full);
      } else if (entry.isFile()) {
        const stats = await lstat(full);
        bytes += stats.size;
        await chmod(full, (stats.mode & 0o111) !== 0 ? 0o755 : 0o644);
      }
      // Anything else (a device node, a fifo in a package) is left as unpacked: nothing reads it.
      if (!entry.isDirectory() && SHARED_LIBRARY.test(entry.name)) {
        const relative = path.relative(root, dir);
        if (!/(^|\/)(dist|site)-packages(\/|$)/.test(relative) && libraryDirs.size < MAX_LIBRARY_DIRS) libraryDirs.add(relative);
      }
    }
  }
  return { bytes, libraryDirs: [...libraryDirs].sort() };
}
