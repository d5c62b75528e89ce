import { FailedPreconditionError, InternalError } from "../errors/index.js";
import { normalizeDistributionName } from "./package-declarations.js";

/**
 * One file an environment installed (docs/packages.md#the-lock): a wheel from the index or
 * wheelhouse, or a Debian package from the host's apt sources. A rebuild installs exactly these
 * files, each checked against its sha256.
 */
export interface LockedFile {
  readonly kind: "wheel" | "deb";
  /** The distribution's name (PEP 503 form) or the Debian package's. */
  readonly name: string;
  readonly version: string;
  /** SHA-256 of the file, lowercase hex. */
  readonly sha256: string;
  /** The file's name, as the index or archive serves it. */
  readonly file: string;
}

/** The resolved set, sorted by kind then name. */
export type EnvironmentLock = readonly LockedFile[];

const SHA256 = /^[0-9a-f]{64}$/;
const LOCK_NAME = /^[a-z0-9][a-z0-9+.-]*$/;
/** Versions as wheels and Debian archives spell them (Debian's epochs and tildes included). */
const LOCK_VERSION = /^[A-Za-z0-9][A-Za-z0-9.+!~:_-]*$/;
/** A file's base name; apt writes an epoch's ":" as "%3a". */
const LOCK_FILE = /^[A-Za-z0-9][A-Za-z0-9.+~%_-]*$/;

/** Sorted, so that equal sets serialise equally. */
export function sortLock(lock: readonly LockedFile[]): EnvironmentLock {
  return [...lock].sort((a, b) => a.kind.localeCompare(b.kind) || a.name.localeCompare(b.name) || a.file.localeCompare(b.file));
}

/**
 * The lock from pip's installation report (`--report`, format version 1): each installed
 * distribution's name, version and the sha256 of the file it came from. pip computes the hash of a
 * file it downloaded when the index gave none, so an entry without one is an installer we do not
 * understand, and the build fails rather than record a lock that cannot be checked.
 */
export function lockFromPipReport(reportText: string): LockedFile[] {
  let report: unknown;
  try {
    report = JSON.parse(reportText);
  } catch (error) {
    throw new InternalError("pip's installation report is not JSON", { cause: error });
  }
  const install = (report as { install?: unknown }).install;
  if (!Array.isArray(install)) throw new InternalError("pip's installation report has no install list");
  return install.map((entry: unknown) => {
    const item = entry as {
      metadata?: { name?: unknown; version?: unknown };
      download_info?: { url?: unknown; archive_info?: { hash?: unknown; hashes?: Record<string, unknown> } };
    };
    const name = item.metadata?.name;
    const version = item.metadata?.version;
    const url = item.download_info?.url;
    const archive = item.download_info?.archive_info;
    const fromHashes = archive?.hashes?.sha256;
    const fromHash = typeof archive?.hash === "string" && archive.hash.startsWith("sha256=") ? archive.hash.slice(7) : undefined;
    const sha256 = typeof fromHashes === "string" ? fromHashes : fromHash;
    if (typeof name !== "string" || typeof version !== "string" || typeof url !== "string" || sha256 === undefined) {
      throw new InternalError(`pip's installation report lacks a name, version, URL or sha256 for ${JSON.stringify(entry).slice(0, 200)}`);
    }
    const file = decodeURIComponent(new URL(url).pathname.split("/").pop() ?? "");
    return checkedEntry({ kind: "wheel", name: normalizeDistributionName(name), version, sha256: sha256.toLowerCase(), file });
  });
}

/** A lock as stored (lock.json, the environments table), checked entry by entry before anything installs from it. */
export function parseLock(text: string): EnvironmentLock {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new FailedPreconditionError("the environment's lock is not JSON; rebuild it from its declarations", { cause: error });
  }
  if (!Array.isArray(parsed)) throw new FailedPreconditionError("the environment's lock is not a list of files");
  return sortLock(parsed.map((entry) => checkedEntry(entry as LockedFile)));
}

export function serializeLock(lock: EnvironmentLock): string {
  return JSON.stringify(sortLock(lock));
}

/**
 * A requirements file that installs exactly the lock's wheels: pinned versions, one hash each, so
 * pip's hash-checking mode accepts no other file (docs/packages.md#rebuilds).
 */
export function lockedRequirementsFile(lock: EnvironmentLock): string {
  return lock
    .filter((entry) => entry.kind === "wheel")
    .map((entry) => `${entry.name}==${entry.version} --hash=sha256:${entry.sha256}\n`)
    .join("");
}

// Every field reaches an installer's argument list or a requirements file on a rebuild: only
// the characters a name, version, hash or file name has are let through.
function checkedEntry(entry: LockedFile): LockedFile {
  const kind = entry.kind;
  const ok =
    (kind === "wheel" || kind === "deb") &&
    typeof entry.name === "string" &&
    LOCK_NAME.test(entry.name) &&
    typeof entry.version === "string" &&
    LOCK_VERSION.test(entry.version) &&
    typeof entry.sha256 === "string" &&
    SHA256.test(entry.sha256) &&
    typeof entry.file === "string" &&
    LOCK_FILE.test(entry.file);
  if (!ok)
    throw new FailedPreconditionError(
      `the environment's lock holds an entry that is not a file record: ${JSON.stringify(entry).slice(0, 200)}`,
    );
  return { kind, name: entry.name, version: entry.version, sha256: entry.sha256, file: entry.file };
}
