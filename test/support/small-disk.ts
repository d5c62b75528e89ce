import { execFileSync } from "node:child_process";
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";

/**
 * A small tmpfs mounted at `dir` (needs root, as the rest of the suite does for Docker): a disk
 * a test can fill, free and turn read-only, without touching the host's real disks.
 */
export interface SmallDisk {
  readonly dir: string;
  /** Writes a filler file until the disk answers ENOSPC. */
  fill(): Promise<void>;
  /** Removes the filler. */
  free(): Promise<void>;
  /**
   * Makes `subdir` read-only (a read-only bind mount over itself), or writable again. The whole
   * disk cannot be remounted read-only while the service holds the registry open for writing.
   */
  readOnly(subdir: string, on: boolean): void;
  unmount(): Promise<void>;
}

const FILLER = ".filler";

export async function mountSmallDisk(dir: string, sizeMb: number): Promise<SmallDisk> {
  await mkdir(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeMb}m,mode=0700`, "tmpfs", dir]);
  return {
    dir,
    async fill() {
      const handle = await open(path.join(dir, FILLER), "a");
      try {
        for (const size of [1 << 20, 1 << 12, 1]) {
          const chunk = Buffer.alloc(size, 0x2e);
          for (;;) {
            try {
              await handle.write(chunk);
            } catch (error) {
              if ((error as NodeJS.ErrnoException).code === "ENOSPC") break;
              throw error;
            }
          }
        }
      } finally {
        await handle.close().catch(() => undefined);
      }
    },
    async free() {
      await rm(path.join(dir, FILLER), { force: true });
    },
    readOnly(subdir, on) {
      const target = path.join(dir, subdir);
      if (on) {
        execFileSync("mount", ["--bind", target, target]);
        execFileSync("mount", ["-o", "remount,bind,ro", target]);
      } else {
        execFileSync("umount", [target]);
      }
    },
    async unmount() {
      execFileSync("umount", ["-l", dir]);
    },
  };
}
