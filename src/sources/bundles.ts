import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { FailedPreconditionError, InvalidArgumentError } from "../errors/index.js";
import type { ExecutionResult } from "../execution/index.js";
import type { Caller } from "../identity/index.js";
import { canManage, canSee, notYoursError } from "../control/index.js";
import type { SkillRecord, SkillRegistry, SkillVisibility } from "../control/index.js";
import type { OnDuplicate, SimilarSkillReport } from "../control/index.js";
import type { CallContext } from "../control/index.js";
import type { SkillQueries } from "../control/index.js";
import { type BundleLimits, DEFAULT_BUNDLE_LIMITS, packBundle, unpackBundle } from "./bundle-archive.js";
import { DEFAULT_FOLDER_LIMITS, inspectSkillFolder } from "./folder-safety.js";
import { checkedSegments, type FolderContent, type FolderStore, readDiscoveredFolder } from "./folder-store.js";
import { readOrCreateSkillId, SKILL_ID_FILE } from "./skill-identity.js";
import { parseSkillManifest } from "./skill-manifest.js";
import { folderHash } from "./folder-store.js";
import { type SkillSources, TEST_FILES_DIR } from "./skill-sources.js";
import type { SourceStore } from "./source-store.js";

export interface SkillBundlesOptions {
  readonly sources: SkillSources;
  readonly sourceStore: SourceStore;
  readonly folders: FolderStore;
  readonly registry: SkillRegistry;
  /** Reads the skill an export packs (GetSkill's use case: the caller's view, a pinned grantee's version). */
  readonly queries: Pick<SkillQueries, "get" | "testFiles">;
  /** Where an archive is unpacked to be inspected: under `$SKILL_ENGINE_HOME`, never a discovery directory or the sandbox. */
  readonly stagingDir: string;
  readonly limits?: BundleLimits;
}

/** ImportSkillBundle's input. */
export interface ImportBundleInput {
  /** A `.tar.gz` or `.zip` of one skill folder. */
  readonly archive: Buffer;
  /** Undefined: private for a new skill, unchanged for an existing one. */
  readonly visibility?: Exclude<SkillVisibility, "internal"> | undefined;
  /** @default "warn" */
  readonly onDuplicate?: OnDuplicate;
}

export interface ImportedBundle {
  readonly skill: SkillRecord;
  readonly skillId: string;
  readonly test: ExecutionResult | undefined;
  /** Skills the caller can see that resemble the imported one (docs/learning.md#near-duplicates). */
  readonly similarSkills: readonly SimilarSkillReport[];
}

/**
 * Bundles (docs/skill-sources.md#bundles): a skill folder as a `.tar.gz` or `.zip`, imported into
 * the canonical store through the same gates as a discovered folder (archive rules, then the
 * folder's safety check, then the TDD gate), and any skill exported as one.
 */
export class SkillBundles {
  constructor(private readonly options: SkillBundlesOptions) {}

  async import(input: ImportBundleInput, context: CallContext): Promise<ImportedBundle> {
    const { archive, visibility, onDuplicate = "warn" } = input;
    const files = await unpackBundle(archive, this.options.limits ?? DEFAULT_BUNDLE_LIMITS);
    await mkdir(this.options.stagingDir, { recursive: true, mode: 0o700 });
    const staging = await mkdtemp(path.join(this.options.stagingDir, "bundle-"));
    try {
      for (const file of files) {
        const target = path.join(staging, ...checkedSegments(file.path, "archive"));
        await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
        await writeFile(target, file.content, { flag: "wx", mode: 0o600 });
      }
      // The same safety check as a discovered folder: sizes, SKILL.md, the content guard on every script.
      const verdict = await inspectSkillFolder(staging, DEFAULT_FOLDER_LIMITS);
      if (!verdict.safe) throw new InvalidArgumentError("archive", verdict.reason);
      const skillMd = files.find((f) => f.path === "SKILL.md");
      const manifest = parseSkillManifest(skillMd?.content.toString("utf8") ?? "");
      this.checkName(manifest.name, context.caller);
      // The bundle's .skill_id is its identity (an export carries it); a bundle without one gets a new id.
      const identity = await readOrCreateSkillId(staging, manifest.name, this.options.sourceStore.latest(manifest.name)?.skillId);
      const content = await readDiscoveredFolder(staging);
      const existing = this.options.registry.get(manifest.name);
      const access = existing
        ? // Internal is derived (private with grants): the stored visibility stays private.
          { owner: existing.owner, visibility: visibility ?? (existing.visibility === "public" ? "public" : "private") }
        : { owner: context.caller.agentId, visibility: visibility ?? "private" };
      const registered = await this.options.sources.registerFiles(
        {
          source: { name: manifest.name, skillId: identity.id, root: "", folder: `bundle:${manifest.name}`, hash: folderHash(content) },
          files: content,
          access,
          onDuplicate,
        },
        context,
      );
      return { ...registered, skillId: identity.id };
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** A discovered folder's name belongs to its folder; another agent's skill is not the caller's to replace. */
  private checkName(name: string, caller: Caller): void {
    const latest = this.options.sourceStore.latest(name);
    if (latest && latest.root !== "") {
      throw new FailedPreconditionError(
        `"${name}" comes from the skill folder ${latest.folder}: edit that folder, or import under another name`,
      );
    }
    const existing = this.options.registry.get(name);
    if (existing && !canManage(existing, caller)) {
      if (canSee(existing, caller)) throw notYoursError(name, existing, "import a new version of", caller);
      throw new FailedPreconditionError(`the name "${name}" is taken by another agent's skill; rename the bundle's skill`);
    }
  }

  /** ExportSkill: a folder skill's canonical files with its `.skill_id`, or a folder generated for a plain skill. */
  async export(input: { readonly name: string }, context: CallContext): Promise<{ archive: Buffer; fileName: string; skillId: string }> {
    const { name } = input;
    const found = await this.options.queries.get({ name }, context);
    let files: FolderContent[];
    let skillId: string;
    if (found.folder) {
      skillId = found.folder.skillId;
      files = (await this.options.folders.read(name, found.skill.version)).filter((f) => f.path !== SKILL_ID_FILE);
    } else if (found.kind === "composed") {
      throw new FailedPreconditionError(
        `"${name}" is a composed skill: its steps are other skills, so it has no folder to export; export its step skills`,
      );
    } else {
      skillId = `${name}__imp_${createHash("sha256").update(`${name}\0${found.skill.createdAt.getTime()}`).digest("hex").slice(0, 8)}`;
      files = plainSkillFolder(
        found.skill,
        found.code,
        found.packages,
        await this.options.queries.testFiles({ name }, context),
        found.secrets,
        found.networkAllow,
      );
    }
    files.push({ path: SKILL_ID_FILE, content: Buffer.from(`${skillId}\n`) });
    return { archive: await packBundle(name, files), fileName: `${name}.tar.gz`, skillId };
  }
}

/**
 * The folder of a plain Python skill (docs/skill-sources.md#export): a SKILL.md from its name,
 * description and schema (and its packages as `metadata.requirements` and `metadata.system_packages`,
 * its secrets' names as `metadata.secrets` and its hosts as `metadata.network_allow`, so an import declares the same ones), the code as `scripts/<name>.py`, the test payload as
 * `tests/test_payload.json`, its test files under `tests/files/` (docs/files.md#test-files).
 */
export function plainSkillFolder(
  skill: SkillRecord,
  code: string,
  packages: { readonly requirements: readonly string[]; readonly systemPackages: readonly string[] } | undefined = undefined,
  testFiles: readonly { readonly path: string; readonly content: Buffer }[] = [],
  secrets: readonly string[] = [],
  networkAllow: readonly string[] = [],
): FolderContent[] {
  const entrypoint = `scripts/${skill.name}.py`;
  const metadata = {
    ...(packages && packages.requirements.length > 0 ? { requirements: [...packages.requirements] } : {}),
    ...(packages && packages.systemPackages.length > 0 ? { system_packages: [...packages.systemPackages] } : {}),
    // Names only: a value is the importing agent's own (docs/security.md#declaring-and-delivering).
    ...(secrets.length > 0 ? { secrets: [...secrets] } : {}),
    // An import is checked against its own service's policy (docs/security.md#declaring-hosts).
    ...(networkAllow.length > 0 ? { network_allow: [...networkAllow] } : {}),
  };
  const frontmatter = stringify(
    {
      name: skill.name,
      description: skill.description,
      entrypoint,
      parameters_schema: skill.parametersSchema,
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    },
    { lineWidth: 0 },
  );
  const body = [
    `# ${skill.name}`,
    "",
    skill.description,
    "",
    `Run \`${entrypoint}\` with the JSON payload as its first argument; the parameters are described by \`parameters_schema\`.`,
    "",
  ].join("\n");
  return [
    { path: "SKILL.md", content: Buffer.from(`---\n${frontmatter}---\n${body}`) },
    { path: entrypoint, content: Buffer.from(code) },
    { path: "tests/test_payload.json", content: Buffer.from(skill.testPayload) },
    ...testFiles.map((file) => ({ path: `${TEST_FILES_DIR}${file.path}`, content: file.content })),
  ].sort((a, b) => (a.path < b.path ? -1 : 1));
}
