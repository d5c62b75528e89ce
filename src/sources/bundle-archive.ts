import { createGunzip, gzipSync } from "node:zlib";
import { Readable } from "node:stream";
import { extract, pack } from "tar-stream";
import yauzl from "yauzl";
import { InvalidArgumentError } from "../errors/index.js";
import type { FolderContent } from "./folder-store.js";

/** docs/skill-sources.md#bundles: what an archive may hold. */
export interface BundleLimits {
  /** Files in the archive (the folder's file cap). */
  readonly maxFiles: number;
  /** Bytes once unpacked (the folder's size limit). */
  readonly maxUnpackedBytes: number;
  /** Unpacked bytes per archive byte: more says bomb. */
  readonly maxRatio: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = { maxFiles: 500, maxUnpackedBytes: 20 * 1024 * 1024, maxRatio: 100 };

/** A refusal: INVALID_ARGUMENT naming the member and the rule. */
function refuse(member: string, rule: string): InvalidArgumentError {
  return new InvalidArgumentError("archive", member === "" ? rule : `member ${JSON.stringify(member)}: ${rule}`);
}

/**
 * Unpacks a `.tar.gz` or `.zip` bundle in memory (docs/skill-sources.md#bundles), refusing
 * symlinks, hard links, devices and anything but files and directories, absolute paths and `..`,
 * more files than the cap, and an archive whose unpacked size passes the limit or the ratio (a
 * bomb): the unpacked bytes are counted as they come, so a bomb is stopped when it crosses the
 * limit, not after. A single top-level folder is stripped.
 */
export async function unpackBundle(archive: Buffer, limits: BundleLimits = DEFAULT_BUNDLE_LIMITS): Promise<FolderContent[]> {
  if (archive.length === 0) throw refuse("", "is empty: send the bytes of a .tar.gz or .zip");
  const budget = Math.min(limits.maxUnpackedBytes, archive.length * limits.maxRatio);
  const counter = new Budget(budget, limits, archive.length);
  let files: FolderContent[];
  if (archive[0] === 0x1f && archive[1] === 0x8b) files = await unpackTarGz(archive, counter, limits);
  else if (archive.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 0x03, 0x04]))) files = await unpackZip(archive, counter, limits);
  else throw refuse("", "is neither a .tar.gz nor a .zip");
  refuseCollisions(files);
  return stripTopFolder(files);
}

/**
 * Two members at one path, or a file where another member needs a folder (`a` and `a/b`), cannot
 * both be written: refused by name rather than left to fail in the staging folder.
 */
function refuseCollisions(files: readonly FolderContent[]): void {
  const filePaths = new Set<string>();
  for (const file of files) {
    if (filePaths.has(file.path)) throw refuse(file.path, "appears twice in the archive (member paths must be unique)");
    filePaths.add(file.path);
  }
  for (const file of files) {
    const segments = file.path.split("/");
    for (let depth = 1; depth < segments.length; depth++) {
      const folder = segments.slice(0, depth).join("/");
      if (filePaths.has(folder)) throw refuse(file.path, `needs a folder "${folder}" where the archive has a file`);
    }
  }
}

class Budget {
  used = 0;
  constructor(
    readonly bytes: number,
    private readonly limits: BundleLimits,
    private readonly archiveBytes: number,
  ) {}

  add(member: string, bytes: number): void {
    this.used += bytes;
    if (this.used > this.bytes) {
      const rule =
        this.bytes < this.limits.maxUnpackedBytes
          ? `unpacks past ${this.limits.maxRatio} times the archive's ${this.archiveBytes} bytes (a compression bomb)`
          : `unpacks past ${this.limits.maxUnpackedBytes} bytes (the limit)`;
      throw refuse(member, rule);
    }
  }
}

/** A member's path: relative, plain segments, no `..`; directories end with "/" (dropped). */
function memberPath(raw: string): string {
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw) || raw.includes("\\")) throw refuse(raw, "an absolute path (members must be relative)");
  const segments = raw.split("/").filter((s, i, all) => !(s === "" && i === all.length - 1) && s !== ".");
  if (segments.includes("..")) throw refuse(raw, 'a path with ".." (members must stay inside the folder)');
  if (segments.some((s) => s === "" || s.includes("\0"))) throw refuse(raw, "an empty path segment");
  return segments.join("/");
}

function unpackTarGz(archive: Buffer, budget: Budget, limits: BundleLimits): Promise<FolderContent[]> {
  return new Promise((resolve, reject) => {
    const files: FolderContent[] = [];
    const gunzip = createGunzip();
    const tar = extract();
    let failed = false;
    const fail = (error: unknown): void => {
      if (failed) return;
      failed = true;
      gunzip.destroy();
      tar.destroy();
      reject(error instanceof InvalidArgumentError ? error : refuse("", `cannot be read as a .tar.gz: ${(error as Error).message}`));
    };
    tar.on("entry", (header, stream, next) => {
      try {
        const name = header.name;
        if (header.type === "symlink") throw refuse(name, "a symbolic link (links could reach outside the skill folder)");
        if (header.type === "link") throw refuse(name, "a hard link");
        if (header.type === "character-device" || header.type === "block-device") throw refuse(name, "a device file");
        if (header.type === "fifo") throw refuse(name, "a FIFO");
        if (header.type !== "file" && header.type !== "directory")
          throw refuse(name, `a ${header.type ?? "special"} entry (only files and folders)`);
        const relative = memberPath(name);
        if (header.type === "directory" || relative === "") {
          stream.resume();
          stream.on("end", next);
          return;
        }
        if (files.length + 1 > limits.maxFiles) throw refuse(name, `more than ${limits.maxFiles} files`);
        const chunks: Buffer[] = [];
        stream.on("data", (data: unknown) => {
          const chunk = data as Buffer;
          try {
            budget.add(name, chunk.length);
            chunks.push(chunk);
          } catch (error) {
            fail(error);
          }
        });
        stream.on("end", () => {
          files.push({ path: relative, content: Buffer.concat(chunks) });
          next();
        });
        stream.on("error", fail);
      } catch (error) {
        fail(error);
      }
    });
    tar.on("finish", () => {
      if (!failed) resolve(files);
    });
    tar.on("error", fail);
    gunzip.on("error", fail);
    // tar's own headers and padding come on top of the members' bytes: twice the budget plus 1 MiB
    // bounds what gunzip may produce even when the tar stream ends early (zero blocks of a bomb).
    let inflated = 0;
    gunzip.on("data", (data: Buffer) => {
      inflated += data.length;
      if (inflated > budget.bytes * 2 + 1024 * 1024)
        fail(refuse("", `inflates past ${budget.bytes * 2 + 1024 * 1024} bytes (a compression bomb)`));
    });
    Readable.from([archive]).pipe(gunzip).pipe(tar);
  });
}

/** zip's external attributes carry the Unix mode in their upper 16 bits. */
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const S_IFLNK = 0o120000;

function unpackZip(archive: Buffer, budget: Budget, limits: BundleLimits): Promise<FolderContent[]> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(archive, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true }, (openError, zip) => {
      if (openError || !zip) return reject(refuse("", `cannot be read as a .zip: ${openError?.message ?? "unknown error"}`));
      const files: FolderContent[] = [];
      let failed = false;
      const fail = (error: unknown): void => {
        if (failed) return;
        failed = true;
        zip.close();
        reject(error instanceof InvalidArgumentError ? error : refuse("", `cannot be read as a .zip: ${(error as Error).message}`));
      };
      zip.on("entry", (entry: yauzl.Entry) => {
        try {
          const name = entry.fileName;
          const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
          if (mode === S_IFLNK) throw refuse(name, "a symbolic link (links could reach outside the skill folder)");
          if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) throw refuse(name, "a device or special file");
          const relative = memberPath(name);
          if (name.endsWith("/") || mode === S_IFDIR || relative === "") return zip.readEntry();
          if (files.length + 1 > limits.maxFiles) throw refuse(name, `more than ${limits.maxFiles} files`);
          // The declared size is checked first; the bytes are counted too, since a header can lie.
          budget.add(name, 0);
          if (budget.used + entry.uncompressedSize > budget.bytes) budget.add(name, entry.uncompressedSize);
          zip.openReadStream(entry, (streamError, stream) => {
            if (streamError || !stream) return fail(streamError ?? new Error("no stream"));
            const chunks: Buffer[] = [];
            stream.on("data", (chunk: Buffer) => {
              try {
                budget.add(name, chunk.length);
                chunks.push(chunk);
              } catch (error) {
                stream.destroy();
                fail(error);
              }
            });
            stream.on("end", () => {
              if (failed) return;
              files.push({ path: relative, content: Buffer.concat(chunks) });
              zip.readEntry();
            });
            stream.on("error", fail);
          });
        } catch (error) {
          fail(error);
        }
      });
      zip.on("end", () => {
        if (!failed) resolve(files);
      });
      zip.on("error", fail);
      zip.readEntry();
    });
  });
}

/** `name/SKILL.md, name/scripts/x.py` → `SKILL.md, scripts/x.py` when every member shares one top folder. */
function stripTopFolder(files: FolderContent[]): FolderContent[] {
  if (files.some((f) => f.path === "SKILL.md")) return files;
  const tops = new Set(files.map((f) => f.path.split("/")[0]));
  if (tops.size !== 1 || files.some((f) => !f.path.includes("/"))) return files;
  return files.map((f) => ({ path: f.path.slice(f.path.indexOf("/") + 1), content: f.content }));
}

/** A `.tar.gz` of one folder named `top` (fixed times and modes, so the same folder gives the same bytes). */
export async function packBundle(top: string, files: readonly FolderContent[]): Promise<Buffer> {
  const tar = pack();
  const chunks: Buffer[] = [];
  tar.on("data", (data: unknown) => chunks.push(data as Buffer));
  const ended = new Promise<void>((resolve, reject) => {
    tar.on("end", resolve);
    tar.on("error", reject);
  });
  const epoch = new Date(0);
  for (const file of files) {
    await new Promise<void>((resolve, reject) => {
      tar.entry(
        { name: `${top}/${file.path}`, size: file.content.length, mode: 0o644, mtime: epoch, type: "file" },
        file.content,
        (error) => (error ? reject(error) : resolve()),
      );
    });
  }
  tar.finalize();
  await ended;
  return gzipSync(Buffer.concat(chunks));
}
