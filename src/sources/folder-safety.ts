import { lstat, readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { scanSkillCode } from "../control/index.js";
import { parseSkillManifest } from "./skill-manifest.js";

/** What a skill folder may hold (docs/skill-sources.md#safety). */
export interface FolderLimits {
  /** @default 100 KiB */
  readonly maxSkillMdBytes: number;
  /** The folder's files together. @default 20 MiB */
  readonly maxFolderBytes: number;
  /** @default 500 */
  readonly maxFiles: number;
  /** Nesting below the skill folder. @default 8 */
  readonly maxDepth: number;
}

export const DEFAULT_FOLDER_LIMITS: FolderLimits = {
  maxSkillMdBytes: 100 * 1024,
  maxFolderBytes: 20 * 1024 * 1024,
  maxFiles: 500,
  maxDepth: 8,
};

/** Files the content guard reads: SKILL.md and every script. */
const SCRIPT_EXTENSIONS = new Set([".py", ".sh", ".bash"]);

/** One file of a folder that passed: its path relative to the folder, and its size. */
export interface FolderFile {
  readonly path: string;
  readonly bytes: number;
}

export type FolderVerdict =
  { readonly safe: true; readonly files: FolderFile[]; readonly cautions: string[] } | { readonly safe: false; readonly reason: string };

/**
 * Looks at every entry of a skill folder without following anything (lstat): a symlink anywhere,
 * a device or socket, a folder nested too deep, too many files, too many bytes or a SKILL.md over
 * its limit block the skill; then the content guard scans SKILL.md and every script, and a
 * dangerous finding blocks it too. Nothing is executed or imported.
 */
export async function inspectSkillFolder(skillDir: string, limits: FolderLimits = DEFAULT_FOLDER_LIMITS): Promise<FolderVerdict> {
  const files: FolderFile[] = [];
  let total = 0;
  const walk = async (relative: string, depth: number): Promise<string | undefined> => {
    if (depth > limits.maxDepth) return `${relative}: nested deeper than ${limits.maxDepth} levels`;
    const entries = await readdir(path.join(skillDir, relative), { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const member = relative === "" ? entry.name : `${relative}/${entry.name}`;
      const stats = await lstat(path.join(skillDir, member));
      if (stats.isSymbolicLink()) return `${member}: a symbolic link (links could reach outside the skill folder)`;
      if (stats.isDirectory()) {
        const problem = await walk(member, depth + 1);
        if (problem) return problem;
        continue;
      }
      if (!stats.isFile()) return `${member}: not a regular file`;
      if (stats.nlink > 1) return `${member}: a hard link (its content is shared with a file outside the folder's control)`;
      files.push({ path: member, bytes: stats.size });
      total += stats.size;
      if (files.length > limits.maxFiles) return `more than ${limits.maxFiles} files`;
      if (total > limits.maxFolderBytes) return `more than ${limits.maxFolderBytes} bytes in all`;
    }
    return undefined;
  };
  const problem = await walk("", 0);
  if (problem) return { safe: false, reason: problem };
  const manifest = files.find((file) => file.path === "SKILL.md");
  if (!manifest) return { safe: false, reason: "SKILL.md: missing" };
  if (manifest.bytes > limits.maxSkillMdBytes) {
    return { safe: false, reason: `SKILL.md: ${manifest.bytes} bytes; the limit is ${limits.maxSkillMdBytes}` };
  }
  const cautions: string[] = [];
  // What SKILL.md declares, as RegisterSkill's code is scanned with its declarations: a declared
  // secret sent to declared hosts is the skill's purpose (docs/security.md#declaring-hosts). A
  // SKILL.md that does not parse declares nothing here; its registration says what is wrong.
  const declared = declarationsOf(await readFile(path.join(skillDir, "SKILL.md"), "utf8"));
  for (const file of files) {
    if (file.path !== "SKILL.md" && !SCRIPT_EXTENSIONS.has(path.extname(file.path))) continue;
    const report = scanSkillCode(await readFile(path.join(skillDir, file.path), "utf8"), undefined, declared);
    const first = report.dangerous[0];
    if (first) {
      return {
        safe: false,
        reason: `${file.path}: content guard rule "${first.ruleId}" (${first.category}) at line ${first.line}: ${first.message}`,
      };
    }
    for (const caution of report.cautions) cautions.push(`${file.path}: ${caution.ruleId} at line ${caution.line}`);
  }
  return { safe: true, files, cautions };
}

function declarationsOf(skillMd: string): { declaredSecrets: readonly string[]; declaresNetwork: boolean } {
  try {
    const manifest = parseSkillManifest(skillMd);
    return { declaredSecrets: manifest.secrets, declaresNetwork: manifest.networkAllow.length > 0 };
  } catch {
    return { declaredSecrets: [], declaresNetwork: false };
  }
}
