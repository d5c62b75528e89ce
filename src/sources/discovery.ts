import { createHash } from "node:crypto";
import { readdir, readFile, readlink, stat } from "node:fs/promises";
import path from "node:path";
import { errorMessage } from "../errors/index.js";
import { DEFAULT_FOLDER_LIMITS, type FolderFile, type FolderLimits, inspectSkillFolder } from "./folder-safety.js";
import { parseSkillManifest, type SkillManifest } from "./skill-manifest.js";
import { readOrCreateSkillId } from "./skill-identity.js";

/**
 * Where a discovered folder stands (docs/skill-sources.md#discovery):
 * - `discovered`: safe and well-formed, an executable skill waiting for its test run;
 * - `ready`: safe and well-formed instructions (nothing to run);
 * - `blocked`: the safety check refused it (a symlink, a size limit, the content guard);
 * - `failed`: it could not be read as a skill (frontmatter, name, description, entrypoint);
 * - `shadowed`: an earlier directory holds a skill of the same name.
 */
export type SourceStatus = "discovered" | "ready" | "blocked" | "failed" | "shadowed";

export interface DiscoveredSkill {
  /** The configured directory the folder was found in. */
  readonly root: string;
  /** The skill folder (absolute). */
  readonly folder: string;
  readonly status: SourceStatus;
  /** Why it is blocked, failed or shadowed; empty otherwise. */
  readonly reason: string;
  readonly name: string | undefined;
  /** The `.skill_id` (read or created); undefined unless discovered or ready. */
  readonly id: string | undefined;
  /** Set when the id could not be written beside SKILL.md. */
  readonly identityNote: string | undefined;
  readonly manifest: SkillManifest | undefined;
  readonly files: readonly FolderFile[];
  /** SHA-256 over every file's path and bytes: an edit changes it, and makes a new version. */
  readonly contentHash: string | undefined;
  readonly cautions: readonly string[];
}

export interface DiscoveryOptions {
  readonly limits?: FolderLimits;
  /** The id the registry remembers for a folder whose sidecar cannot be written. */
  readonly rememberedId?: (folder: string) => string | undefined;
}

export interface DiscoveryResult {
  readonly skills: DiscoveredSkill[];
  /** Configured directories that could not be listed (missing, not a directory, unreadable). */
  readonly problems: Array<{ readonly root: string; readonly reason: string }>;
}

/**
 * Finds every subdirectory with a `SKILL.md` in `roots`, in order; a name found again in a later
 * root is shadowed by the earlier one (reported, not an error). Each folder is inspected before
 * anything of it is read as a skill, and nothing of it is executed. Never throws for a folder's
 * fault: a broken or hostile folder is an entry with its status and reason.
 */
export async function discoverSkillFolders(roots: readonly string[], options: DiscoveryOptions = {}): Promise<DiscoveryResult> {
  const skills: DiscoveredSkill[] = [];
  const problems: Array<{ root: string; reason: string }> = [];
  const byName = new Map<string, string>();
  for (const root of roots) {
    let names: string[];
    let links: string[];
    try {
      const entries = await readdir(root, { withFileTypes: true });
      names = entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
      links = entries.filter((entry) => entry.isSymbolicLink()).map((entry) => entry.name);
    } catch (error) {
      problems.push({ root, reason: errorMessage(error) });
      continue;
    }
    names.sort((a, b) => a.localeCompare(b));
    links.sort((a, b) => a.localeCompare(b));
    // A linked skill folder is reported, never followed (docs/skill-sources.md#safety).
    for (const name of links) {
      const blocked = await linkedSkillFolder(root, name);
      if (blocked) skills.push(blocked);
    }
    for (const name of names) {
      const folder = path.join(root, name);
      if (!(await isFile(path.join(folder, "SKILL.md")))) continue;
      const found = await discoverOne(root, folder, options);
      if (found.name !== undefined && (found.status === "discovered" || found.status === "ready")) {
        const earlier = byName.get(found.name);
        if (earlier !== undefined) {
          skills.push({ ...found, status: "shadowed", reason: `shadowed by ${earlier}`, id: undefined, identityNote: undefined });
          continue;
        }
        byName.set(found.name, folder);
      }
      skills.push(found);
    }
  }
  return { skills, problems };
}

async function discoverOne(root: string, folder: string, options: DiscoveryOptions): Promise<DiscoveredSkill> {
  const base = {
    root,
    folder,
    name: undefined,
    id: undefined,
    identityNote: undefined,
    manifest: undefined,
    files: [],
    contentHash: undefined,
    cautions: [],
  };
  let verdict;
  try {
    verdict = await inspectSkillFolder(folder, options.limits ?? DEFAULT_FOLDER_LIMITS);
  } catch (error) {
    return { ...base, status: "failed", reason: `cannot read the folder: ${errorMessage(error)}` };
  }
  if (!verdict.safe) return { ...base, status: "blocked", reason: verdict.reason };
  let manifest: SkillManifest;
  try {
    manifest = parseSkillManifest(await readFile(path.join(folder, "SKILL.md"), "utf8"));
  } catch (error) {
    return { ...base, status: "failed", reason: errorMessage(error) };
  }
  const named = { ...base, name: manifest.name, manifest, files: verdict.files, cautions: verdict.cautions };
  if (manifest.entrypoint !== undefined && !verdict.files.some((file) => file.path === manifest.entrypoint)) {
    return { ...named, status: "failed", reason: `entrypoint ${manifest.entrypoint} is not a file of the folder` };
  }
  const identity = await readOrCreateSkillId(folder, manifest.name, options.rememberedId?.(folder));
  // The sidecar is the folder's identity, not its content: an id written now is no edit.
  const hash = createHash("sha256");
  for (const file of verdict.files) {
    if (file.path === ".skill_id") continue;
    hash.update(`${file.path}\0${file.bytes}\0`);
    hash.update(await readFile(path.join(folder, file.path)));
  }
  return {
    ...named,
    status: manifest.kind === "executable" ? "discovered" : "ready",
    reason: "",
    id: identity.id,
    identityNote: identity.note,
    contentHash: hash.digest("hex"),
  };
}

/**
 * A symbolic link in a root that leads to a folder with a SKILL.md: blocked, with where it points.
 * Only the link's target's metadata is looked at (is it a folder, does it hold a SKILL.md); nothing
 * of it is read. Any other link is not a skill folder and is left out, as a plain file is.
 */
async function linkedSkillFolder(root: string, name: string): Promise<DiscoveredSkill | undefined> {
  const folder = path.join(root, name);
  if (!(await isFile(path.join(folder, "SKILL.md")))) return undefined;
  const target = await readlink(folder).catch(() => "?");
  return {
    root,
    folder,
    status: "blocked",
    reason: `${name} is a symbolic link (to ${target}); skill folders are never followed through links: put the folder itself in ${root}`,
    name: undefined,
    id: undefined,
    identityNote: undefined,
    manifest: undefined,
    files: [],
    contentHash: undefined,
    cautions: [],
  };
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}
