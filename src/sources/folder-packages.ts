import { normalizeRequirements, MAX_REQUIREMENTS } from "../environments/index.js";
import { InvalidArgumentError } from "../errors/index.js";
import type { SkillManifest } from "./skill-manifest.js";

/** The file beside `SKILL.md` that may declare a folder's Python packages (docs/skill-sources.md#packages). */
export const REQUIREMENTS_FILE = "requirements.txt";

/** What a folder declares, as written: handed to its registration, which builds the environment. */
export interface FolderPackages {
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
}

/**
 * A `requirements.txt` (docs/skill-sources.md#packages): one requirement a line, blank lines and `#`
 * comments (a whole line, or after a space as pip reads them) ignored. The file is read by us, never
 * handed to pip, so anything pip would read as more than a requirement (an option such as `-r`, `-e`,
 * `--index-url`, a URL, a path, a line continuation) is refused, naming the file and the line, and
 * each requirement passes the same rules as RegisterSkill's (docs/packages.md#declarations).
 */
export function parseRequirementsFile(text: string, file: string = REQUIREMENTS_FILE): string[] {
  const requirements: string[] = [];
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  for (const [index, raw] of lines.entries()) {
    const where = `${file} line ${index + 1}`;
    const line = raw
      .replace(/\r$/, "")
      .replace(/(^|[ \t])#.*$/, "")
      .trim();
    if (line === "") continue;
    if (line.startsWith("-")) {
      throw new InvalidArgumentError(
        where,
        `"${shown(line)}" is an installer option (-r, -c, -e, --index-url, …); ${file} holds requirements only, one a line (docs/skill-sources.md#packages)`,
      );
    }
    if (line.endsWith("\\")) {
      throw new InvalidArgumentError(where, `ends with "\\": line continuations are not accepted, one requirement a line`);
    }
    try {
      normalizeRequirements([line]);
    } catch (error) {
      // The environments' message starts with its own field (`requirements[0]: …`): here it is the line.
      const reason = (error as Error).message.replace(/^requirements\[0\]: /, "");
      // A reason that quotes what it refuses already shows it.
      throw new InvalidArgumentError(where, reason.startsWith('"') ? reason : `"${shown(line)}" ${reason}`, { cause: error });
    }
    requirements.push(line);
    if (requirements.length > MAX_REQUIREMENTS) {
      throw new InvalidArgumentError(file, `at most ${MAX_REQUIREMENTS} requirements may be declared (line ${index + 1} is one more)`);
    }
  }
  return requirements;
}

/**
 * A folder's packages: `metadata.requirements` and `metadata.system_packages` from its `SKILL.md`, or
 * its `requirements.txt` for the Python ones. Both declaring Python packages is refused rather than
 * guessed at (docs/skill-sources.md#packages). An instructions-only folder runs nothing, so its
 * `requirements.txt` is not read (it may be a file for the agent following the instructions).
 */
export function folderPackages(manifest: SkillManifest, requirementsText: string | undefined): FolderPackages {
  const systemPackages = manifest.systemPackages ?? [];
  if (manifest.kind !== "executable" || requirementsText === undefined) {
    return { requirements: manifest.requirements ?? [], systemPackages };
  }
  if (manifest.requirements !== undefined) {
    throw new InvalidArgumentError(
      "SKILL.md",
      `declares metadata.requirements and the folder has a ${REQUIREMENTS_FILE}: declare the Python packages in one of them`,
    );
  }
  return { requirements: parseRequirementsFile(requirementsText), systemPackages };
}

/** For messages: the line as written, never longer than a line of a log. */
function shown(line: string): string {
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}
