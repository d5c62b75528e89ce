import { randomBytes } from "node:crypto";
import { renameSync, unlinkSync, writeSync } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import path from "node:path";

/** Prefix of in-progress temp files; start-up reconciliation removes any a crash left behind. */
export const TEMP_FILE_PREFIX = ".tmp-";

/**
 * Replaces `target` with `content` so that a crash at any moment leaves either the old file or
 * the new one, never a torn mix: write a temp file beside it, fsync, rename over, fsync the
 * directory so the rename itself is durable (unless `syncDirectory` is false: the caller fsyncs it).
 */
export async function writeFileAtomic(target: string, content: FileContent, options: { syncDirectory?: boolean } = {}): Promise<void> {
  const prepared = await prepareFileAtomic(target, content);
  // Without the directory's fsync the rename may not survive a host crash yet: for a caller that
  // writes many files into one directory and fsyncs it once after them (the registry mirror).
  if (options.syncDirectory === false) prepared.commitNow();
  else await prepared.commit();
}

/**
 * What a file is written from: its text or bytes, or its text in pieces. Pieces are pulled and
 * written in one synchronous pass (so a generator reading a database sees one state of it) and
 * only {@link CHUNK_BYTES} of them are held at a time, so a large file never sits in memory
 * whole (docs/performance.md#memory-over-time).
 */
export type FileContent = string | Buffer | Iterable<string>;

/** Pieces of an iterable content are gathered up to this many bytes before each write. */
const CHUNK_BYTES = 64 * 1024;

/** A file written in full beside its target, waiting to replace it. */
export interface PreparedFile {
  /** Renames it over the target (no new data blocks: a full disk does not stop it) and fsyncs the directory. */
  commit(): Promise<void>;
  /** Renames it over the target at once, without the directory's fsync (see {@link StagedFile.renameNow}). */
  commitNow(): void;
  /** Removes it, leaving the target as it was. */
  discard(): Promise<void>;
}

/**
 * The part of an atomic write that can run out of space, done ahead: the content is written and
 * fsynced beside `target`, which is untouched until `commit`. Lets a change write every file it
 * needs before it commits anything (docs/operations.md#full-disks-and-a-locked-registry).
 */
export async function prepareFileAtomic(target: string, content: FileContent): Promise<PreparedFile> {
  const staged = await stageFile(path.dirname(target), path.basename(target), content);
  return { commit: () => staged.commitAs(target), commitNow: () => staged.renameNow(target), discard: () => staged.discard() };
}

/** A file written in full and fsynced under a temp name, waiting for the name it will have. */
export interface StagedFile {
  /** Renames it to `target` (same file system) and fsyncs `target`'s directory. */
  commitAs(target: string): Promise<void>;
  /**
   * Renames it to `target` on the calling thread and does not fsync the directory: for a request's
   * critical path whose durability the caller gets elsewhere (and says where). A rename is one
   * metadata operation of microseconds; through the thread pool it costs a registration a round
   * trip and whatever the event loop runs in between (docs/performance.md#registration).
   */
  renameNow(target: string): void;
  /** Removes it. */
  discard(): Promise<void>;
}

/** Writes and fsyncs `content` to a temp file in `directory` (`label` names it for people). */
export async function stageFile(directory: string, label: string, content: FileContent): Promise<StagedFile> {
  const temp = path.join(directory, `${TEMP_FILE_PREFIX}${label}-${randomBytes(6).toString("hex")}`);
  const handle = await open(temp, "wx", 0o644);
  try {
    if (typeof content === "string" || Buffer.isBuffer(content)) await handle.writeFile(content);
    else writePiecesSync(handle.fd, content);
    await handle.sync();
  } catch (error) {
    await handle.close();
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  return {
    async commitAs(target: string) {
      try {
        await rename(temp, target);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        throw error;
      }
      await fsyncDirectory(path.dirname(target));
    },
    renameNow(target: string) {
      try {
        renameSync(temp, target);
      } catch (error) {
        try {
          unlinkSync(temp);
        } catch {
          // already gone: nothing to clean
        }
        throw error;
      }
    },
    async discard() {
      await unlink(temp).catch(() => undefined);
    },
  };
}

/** Writes `pieces` to `fd` in order, {@link CHUNK_BYTES} at a time, without yielding to the event loop. */
function writePiecesSync(fd: number, pieces: Iterable<string>): void {
  let gathered: string[] = [];
  let gatheredLength = 0;
  const writeGathered = (): void => {
    const bytes = Buffer.from(gathered.join(""), "utf8");
    for (let offset = 0; offset < bytes.length;) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    gathered = [];
    gatheredLength = 0;
  };
  for (const piece of pieces) {
    gathered.push(piece);
    gatheredLength += piece.length;
    if (gatheredLength >= CHUNK_BYTES) writeGathered();
  }
  if (gatheredLength > 0) writeGathered();
}

export async function fsyncDirectory(directory: string): Promise<void> {
  const handle = await open(directory, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
