/**
 * The registry's mirror on disk (docs/operations.md#the-registry-mirror): one file per skill,
 * `.registry/<name>.json` in the canonical directory, so a change rewrites one small file whatever the
 * library's size. Each file is `{"format": 1, "skill": <entry>}`, the entry in the one schema of
 * mirror-format.ts. Homes from before this layout have one whole `skills_registry.json`; it is read
 * under the per-skill files (a skill's own file wins) and removed once every skill has its own.
 */
import { readdir, readFile, unlink } from "node:fs/promises";
import path from "node:path";
import { fsyncDirectory, writeFileAtomic } from "./atomic-file.js";
import { MIRROR_FORMAT, type MirrorEntry } from "./mirror-format.js";
import { pathExists } from "./path-exists.js";

/** The mirror's directory, in the canonical directory. */
export const MIRROR_DIR = ".registry";
/** The whole-file mirror of homes written before {@link MIRROR_DIR}; read, never written. */
export const LEGACY_MIRROR_FILE = "skills_registry.json";
const SUFFIX = ".json";

/** A skill's mirror file as people and messages name it. */
export function mirrorFileLabel(name: string): string {
  return `${MIRROR_DIR}/${name}${SUFFIX}`;
}

/** The mirror read back: one document in the shape `readMirrorDocument` reads, and what was off about the files. */
export interface MirrorFilesReading {
  /** `{format, skills}` gathered from every file; undefined when there is no mirror at all. */
  readonly document: { format: number; skills: unknown[] } | undefined;
  readonly problems: string[];
}

export class MirrorFiles {
  readonly directory: string;

  constructor(canonicalDirectory: string) {
    this.directory = path.join(canonicalDirectory, MIRROR_DIR);
  }

  /** Writes (or, for a skill the registry no longer has, removes) one skill's file; the directory's fsync is {@link sync}'s. */
  async write(name: string, entry: MirrorEntry | undefined): Promise<void> {
    const file = path.join(this.directory, `${name}${SUFFIX}`);
    if (entry === undefined) {
      await unlink(file).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== "ENOENT") throw error;
      });
      return;
    }
    await writeFileAtomic(file, `${JSON.stringify({ format: MIRROR_FORMAT, skill: entry }, null, 2)}\n`, { syncDirectory: false });
  }

  /**
   * Makes the renames of the files written since the last call durable, and those of the canonical
   * directory too: a registration renames its active file in without waiting for that fsync, counting
   * on this one just after its reply (docs/performance.md#the-mirror-after-the-reply).
   */
  async sync(): Promise<void> {
    await fsyncDirectory(this.directory);
    await fsyncDirectory(path.dirname(this.directory));
  }

  /** Removes the whole-file mirror of an older home once every skill has its own file. */
  async removeLegacy(): Promise<void> {
    const legacy = path.join(path.dirname(this.directory), LEGACY_MIRROR_FILE);
    if (!(await pathExists(legacy))) return;
    await unlink(legacy);
    await fsyncDirectory(path.dirname(this.directory));
  }

  /**
   * Every skill's entry: the legacy whole file's first, each replaced by the skill's own file.
   * A file that cannot be read or parsed costs that skill's metadata, with a problem naming it.
   */
  async read(): Promise<MirrorFilesReading> {
    const problems: string[] = [];
    const entries = new Map<string, unknown>();
    let found = false;
    const legacyText = await readFile(path.join(path.dirname(this.directory), LEGACY_MIRROR_FILE), "utf8").catch(() => undefined);
    if (legacyText !== undefined) {
      found = true;
      try {
        const legacy = JSON.parse(legacyText) as { skills?: unknown };
        for (const skill of Array.isArray(legacy.skills) ? legacy.skills : []) {
          const name = (skill as { name?: unknown } | null)?.name;
          if (typeof name === "string") entries.set(name, skill);
        }
      } catch (error) {
        problems.push(`${LEGACY_MIRROR_FILE} is not JSON (${(error as Error).message}); read the per-skill files only`);
      }
    }
    const files = await readdir(this.directory).catch(() => undefined);
    if (files !== undefined) found = true;
    for (const file of (files ?? []).filter((f) => f.endsWith(SUFFIX)).sort()) {
      const name = file.slice(0, -SUFFIX.length);
      const label = mirrorFileLabel(name);
      try {
        const parsed = JSON.parse(await readFile(path.join(this.directory, file), "utf8")) as { format?: unknown; skill?: unknown };
        if (parsed.format !== MIRROR_FORMAT) {
          problems.push(`${label} has format ${JSON.stringify(parsed.format)}, expected ${MIRROR_FORMAT}; read as far as it matches`);
        }
        if ((parsed.skill as { name?: unknown } | undefined)?.name !== name) {
          problems.push(`${label} does not hold the entry of ${name}; ignored`);
          continue;
        }
        entries.set(name, parsed.skill);
      } catch (error) {
        problems.push(`${label} cannot be read (${(error as Error).message}); ignored`);
      }
    }
    return { document: found ? { format: MIRROR_FORMAT, skills: [...entries.values()] } : undefined, problems };
  }
}
