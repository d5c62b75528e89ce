import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { errorMessage, InvalidArgumentError, RunCancelledError, SkillNotFoundError } from "../errors/index.js";
import { type Caller, LOCAL_AGENT, serviceCaller } from "../identity/index.js";
import type { CallContext } from "../control/index.js";
import { canSee, requireAdmin } from "../control/index.js";
import { validateSkillName } from "../control/index.js";
import { isLiveStatus as isLive, type SkillRecord, type SkillRegistry } from "../control/index.js";
import type { OnDuplicate } from "../control/index.js";
import type { FolderRegistration } from "../control/index.js";
import type { CatalogEntry } from "../control/index.js";
import type { FolderSkillRegistrar } from "./folder-registrar.js";
import { mergeCatalog, sourceCatalogEntry, type SourcedCatalogEntry } from "./source-catalog.js";
import { catalogPage } from "./source-pages.js";
import type { PageRequest } from "../paging/index.js";
import { type DiscoveredSkill, discoverSkillFolders, type SourceStatus } from "./discovery.js";
import { DEFAULT_FOLDER_LIMITS, type FolderLimits } from "./folder-safety.js";
import { type FolderContent, FolderStore, folderHash, readDiscoveredFolder } from "./folder-store.js";
import { dependencyOrder, failureKey } from "./folder-dependencies.js";
import { folderPackages, REQUIREMENTS_FILE } from "./folder-packages.js";
import { folderLauncher } from "./launcher.js";
import { manifestSchema, parseSkillManifest, resolveBaseDir, type SkillManifest } from "./skill-manifest.js";
import type { FolderSkillKind, SourceStore, SourceVersion } from "./source-store.js";

/** One discovered folder as the catalog shows it (docs/skill-sources.md#catalog). */
export interface SourceEntry {
  /** The skill's name; empty when the folder could not be read as a skill. */
  readonly name: string;
  /** The configured directory the folder was found in. */
  readonly root: string;
  readonly folder: string;
  readonly skillId: string;
  readonly status: SourceStatus;
  /** Why it is blocked, failed, shadowed or still waiting; empty when ready. */
  readonly reason: string;
  /** `directory` (executable) or `instructions`; empty when unknown. */
  readonly kind: "directory" | "instructions" | "";
  /** The registered version this folder is; 0 when none. */
  readonly version: number;
}

export interface ScanReport {
  readonly entries: SourceEntry[];
  /** Configured directories that could not be listed. */
  readonly problems: Array<{ readonly root: string; readonly reason: string }>;
  /** Names registered (new or new version), and retired because their folder is gone. */
  readonly registered: string[];
  readonly retired: string[];
  readonly durationMs: number;
}

/** What GetSkillContent answers (docs/skill-sources.md#progressive-disclosure). */
export interface SkillContent {
  readonly skill: SkillRecord;
  readonly skillId: string;
  readonly kind: "directory" | "instructions";
  /** SKILL.md without its frontmatter, `{baseDir}` resolved against the skill's folder (never a host path). */
  readonly body: string;
  /** Always ".": the skill's own folder, which GetSkillFile's relative paths start from. */
  readonly baseDir: string;
  readonly files: Array<{ path: string; bytes: number }>;
}

export interface SkillSourcesOptions {
  /** SKILL_ENGINE_SKILL_DIRS, in order: earlier ones shadow later ones. */
  readonly roots: readonly string[];
  readonly registry: SkillRegistry;
  /** The control plane's side: registers, retires and restores what the scans find. */
  readonly skills: FolderSkillRegistrar;
  readonly sources: SourceStore;
  readonly folders: FolderStore;
  readonly logger: Logger;
  readonly limits?: FolderLimits;
  /** Largest file GetSkillFile returns. */
  readonly maxFileBytes: number;
}

/** Who owns folder skills: the operator configured the directories, so every agent may see them. */
const FOLDER_ACCESS = { owner: LOCAL_AGENT, visibility: "public" } as const;
/** How a retirement for a removed folder starts (docs/skill-sources.md#registration). */
const FOLDER_GONE = "its folder";
const TEST_PAYLOAD_FILE = "tests/test_payload.json";
/** A folder's test files: handed to its test runs under /sandbox/in/ (docs/files.md#test-files). */
export const TEST_FILES_DIR = "tests/files/";
/** Scans register, retire and restore as a service caller of their own. */
const SCAN_CONTEXT: CallContext = { caller: serviceCaller("skill-sources") };

/** A folder's files to register as a new version (see {@link SkillSources.registerFiles}). */
export interface FolderFilesInput {
  readonly source: { name: string; skillId: string; root: string; folder: string; hash: string };
  readonly files: readonly FolderContent[];
  /** @default the operator's folders' access: the local agent's, public */
  readonly access?: { owner: string; visibility: "private" | "public" };
  /** @default "warn" */
  readonly onDuplicate?: OnDuplicate;
}

/**
 * Skill folders wired into the service (docs/skill-sources.md): each scan discovers the folders,
 * registers what is new or edited as a version through the same gate as every skill, retires
 * what is gone, and keeps the entries the catalog shows. Scans are serialized; a scan never
 * throws for a folder's fault.
 */
export class SkillSources {
  private scanning: Promise<unknown> = Promise.resolve();
  private last: ScanReport = { entries: [], problems: [], registered: [], retired: [], durationMs: 0 };
  /** A folder content that failed its test run is not tested again until it changes. */
  private readonly failures = new Map<string, { hash: string; reason: string }>();
  private closed = false;
  /** Scans whose entries differed from the scan before: the folders' part of {@link catalogEtag}. */
  private changedScans = 0;
  private lastEntries = "[]";

  constructor(private readonly options: SkillSourcesOptions) {}

  get roots(): readonly string[] {
    return this.options.roots;
  }

  /** The entries of the last scan. */
  get lastScan(): ScanReport {
    return this.last;
  }

  /**
   * GetCatalog's etag (docs/api.md#catalog-etag): the registry's catalog generation and the count of
   * scans that found other folders than the scan before (a periodic scan that finds the same ones
   * leaves it alone). Cheap: no catalog is read.
   */
  catalogEtag(): string {
    return `${this.options.registry.catalogGeneration()}.${this.changedScans}`;
  }

  private isFolderSkill(name: string): boolean {
    return this.options.sources.latest(name) !== undefined;
  }

  /**
   * Start-up: source rows missing from registry.db (a registry rebuilt from the canonical store)
   * are read back from the records beside the canonical folders. Returns how many.
   */
  async backfill(): Promise<number> {
    let recovered = 0;
    for (const raw of await this.options.folders.records()) {
      const name = typeof raw.name === "string" ? raw.name : "";
      const version = typeof raw.version === "number" ? raw.version : 0;
      if (name === "" || version < 1 || this.options.sources.get(name, version) || !this.options.registry.version(name, version)) continue;
      this.options.sources.record({
        name,
        version,
        skillId: String(raw.skillId ?? ""),
        kind: raw.kind === "executable" ? "executable" : "instructions",
        entrypoint: String(raw.entrypoint ?? ""),
        root: String(raw.root ?? ""),
        folder: String(raw.folder ?? ""),
        folderHash: String(raw.folderHash ?? ""),
        createdAt: new Date(String(raw.createdAt ?? "")),
      });
      recovered++;
    }
    return recovered;
  }

  /** Shutdown: a scan in progress stops between folders; resolves when it has. */
  async close(): Promise<void> {
    this.closed = true;
    await this.scanning;
  }

  /** Runs a scan after the one in progress (if any); `signal` cancels waiting for it, not the scan. */
  rescan(signal?: AbortSignal): Promise<ScanReport> {
    const next = this.scanning.then(() => this.scanOnce());
    this.scanning = next.catch(() => undefined);
    if (!signal) return next;
    return new Promise<ScanReport>((resolve, reject) => {
      const abort = (): void => reject(new RunCancelledError("cancelled"));
      if (signal.aborted) return abort();
      signal.addEventListener("abort", abort, { once: true });
      next.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
    });
  }

  private async scanOnce(): Promise<ScanReport> {
    const started = performance.now();
    const { sources, logger } = this.options;
    // A folder's id as the registry knows it: remembered for a read-only folder, else its latest version's.
    const knownIds = new Map(sources.latestOfAll().map((row) => [row.folder, row.skillId]));
    const found = await discoverSkillFolders(this.options.roots, {
      limits: this.options.limits ?? DEFAULT_FOLDER_LIMITS,
      rememberedId: (folder) => sources.rememberedId(folder) ?? knownIds.get(folder),
    });
    const entries: SourceEntry[] = [];
    const present = new Set<string>();
    const registered: string[] = [];
    for (const discovered of dependencyOrder(found.skills)) {
      // Shutdown: the scan stops between folders; what it did not reach, the next start's scan does.
      if (this.closed) break;
      if (discovered.status !== "discovered" && discovered.status !== "ready") {
        entries.push(entryOf(discovered, discovered.status, discovered.reason, 0));
        continue;
      }
      present.add(discovered.name as string);
      if (discovered.identityNote !== undefined && discovered.id !== undefined) sources.rememberId(discovered.folder, discovered.id);
      const entry = await this.syncFolder(discovered);
      if (entry.registered) registered.push(entry.entry.name);
      entries.push(entry.entry);
    }
    const unreadable = new Set(found.problems.map((p) => p.root));
    const retired: string[] = [];
    // A scan cut short by shutdown has not seen every folder: it retires nothing.
    for (const row of this.closed ? [] : sources.latestOfAll()) {
      // Imported bundles have no folder to lose; a directory that cannot be listed right now loses nothing.
      if (row.root === "" || present.has(row.name) || unreadable.has(row.root)) continue;
      const gone = await this.options.skills
        .retire({ name: row.name, reason: `${FOLDER_GONE} ${row.folder} is gone from the skill directories` }, SCAN_CONTEXT)
        .catch((error: unknown) => {
          logger.error({ err: error, skill: row.name }, "could not retire a folder skill whose folder is gone");
          return undefined;
        });
      if (gone) retired.push(row.name);
    }
    const durationMs = performance.now() - started;
    this.last = { entries, problems: found.problems, registered, retired, durationMs };
    const seen = JSON.stringify(entries);
    if (seen !== this.lastEntries) {
      this.lastEntries = seen;
      this.changedScans += 1;
    }
    logger.info(
      { folders: entries.length, registered, retired, problems: found.problems.length, ms: Math.round(durationMs) },
      "skill directories scanned",
    );
    return this.last;
  }

  /** Registers a usable folder when it is new or changed; answers its catalog entry. */
  private async syncFolder(discovered: DiscoveredSkill): Promise<{ entry: SourceEntry; registered: boolean }> {
    const name = discovered.name as string;
    const manifest = discovered.manifest as SkillManifest;
    const kind = manifest.kind === "executable" ? "directory" : "instructions";
    const record = this.options.registry.get(name);
    if (record && !this.isFolderSkill(name)) {
      return {
        entry: entryOf(discovered, "failed", `the name "${name}" is taken by a skill that is not kept as a folder`, 0),
        registered: false,
      };
    }
    const active = record ? this.options.sources.get(name, record.version) : undefined;
    if (record && active && active.folderHash === discovered.contentHash) {
      if (active.folder !== discovered.folder) this.options.sources.moveFolder(name, record.version, discovered.root, discovered.folder);
      if (record.status === "deleted") {
        return {
          entry: entryOf(discovered, "failed", "deleted with DeleteSkill: RestoreSkill brings it back, or edit the folder", record.version),
          registered: false,
        };
      }
      // Only a retirement for a missing folder is undone; one by the health rules stays (RestoreSkill decides).
      if (record.status === "retired" && record.statusReason.startsWith(FOLDER_GONE)) {
        await this.options.skills.restore({ name }, SCAN_CONTEXT).catch((error: unknown) => {
          this.options.logger.error({ err: error, skill: name }, "could not restore a folder skill whose folder is back");
        });
      }
      return { entry: { ...entryOf(discovered, "ready", discovered.identityNote ?? "", record.version), kind }, registered: false };
    }
    const failed = this.failures.get(name);
    if (failed && failed.hash === failureKey(discovered, this.options.registry)) {
      return { entry: entryOf(discovered, "failed", failed.reason, record?.version ?? 0), registered: false };
    }
    try {
      const skill = await this.registerFolder(discovered);
      this.failures.delete(name);
      // A folder whose .skill_id cannot be written is reported, its id kept in the registry.
      return { entry: { ...entryOf(discovered, "ready", discovered.identityNote ?? "", skill.version), kind }, registered: true };
    } catch (error) {
      const reason = errorMessage(error);
      // The sandbox being away is no fault of the folder: it is tried again on the next scan.
      const retry = error instanceof Error && "kind" in error && (error as { kind: string }).kind === "unavailable";
      if (!retry && discovered.contentHash !== undefined)
        this.failures.set(name, { hash: failureKey(discovered, this.options.registry), reason });
      this.options.logger.warn({ skill: name, folder: discovered.folder, reason }, "skill folder not registered");
      return { entry: entryOf(discovered, retry ? "discovered" : "failed", reason, record?.version ?? 0), registered: false };
    }
  }

  private async registerFolder(discovered: DiscoveredSkill): Promise<SkillRecord> {
    const files = await readDiscoveredFolder(discovered.folder);
    const hash = folderHash(files);
    if (hash !== discovered.contentHash) throw new Error("the folder changed while it was being read; the next scan registers it");
    const source = {
      name: discovered.name as string,
      skillId: discovered.id as string,
      root: discovered.root,
      folder: discovered.folder,
      hash,
    };
    return this.registerFiles({ source, files }, SCAN_CONTEXT).then((registered) => registered.skill);
  }

  /**
   * Registers a folder's files as a new version (also the way in for an imported bundle): the
   * manifest is read from these bytes, the TDD gate runs on these bytes, and these bytes become
   * the canonical copy.
   */
  async registerFiles(input: FolderFilesInput, context: CallContext): Promise<FolderRegistration> {
    const { source, files, access = FOLDER_ACCESS, onDuplicate = "warn" } = input;
    const text = (file: string): string | undefined => files.find((f) => f.path === file)?.content.toString("utf8");
    const manifest = parseSkillManifest(text("SKILL.md") ?? "");
    if (manifest.name !== source.name) throw new InvalidArgumentError("SKILL.md", `name changed to "${manifest.name}" while being read`);
    const kind: FolderSkillKind = manifest.kind;
    let code: string;
    let testPayload = "{}";
    if (kind === "executable") {
      const entry = text(manifest.entrypoint as string);
      if (entry === undefined) throw new InvalidArgumentError("SKILL.md", `entrypoint ${manifest.entrypoint} is not a file of the folder`);
      code = entry;
      const payload = manifest.testPayload ?? text(TEST_PAYLOAD_FILE);
      if (payload === undefined) {
        throw new InvalidArgumentError(
          "SKILL.md",
          `an executable skill needs a test payload: test_payload in the frontmatter, or ${TEST_PAYLOAD_FILE}`,
        );
      }
      testPayload = payload;
    } else {
      code = text("SKILL.md") as string;
    }
    // The version's packages; a bad declaration refuses the folder before anything is built or run.
    const packages = folderPackages(manifest, text(REQUIREMENTS_FILE));
    const { sources, folders } = this.options;
    const row = (version: number): SourceVersion => ({
      name: source.name,
      version,
      skillId: source.skillId,
      kind,
      entrypoint: manifest.entrypoint ?? "",
      root: source.root,
      folder: source.folder,
      folderHash: source.hash,
      createdAt: new Date(),
    });
    return this.options.skills.register(
      {
        name: source.name,
        description: manifest.description,
        parametersSchema: manifestSchema(manifest),
        code,
        testPayload,
        ...(kind === "executable" ? { run: { launcher: folderLauncher(manifest.entrypoint as string), folder: files } } : {}),
        access,
        beforeCommit: async (version) => {
          await folders.write(source.name, version, files);
          const entry = row(version);
          await folders.writeRecord(source.name, version, { ...entry, createdAt: entry.createdAt.toISOString() });
          sources.record(entry);
        },
        discard: (version) => folders.discard(source.name, version),
        onDuplicate,
        requirements: packages.requirements,
        systemPackages: packages.systemPackages,
        secrets: manifest.secrets,
        networkAllow: manifest.networkAllow,
        dependsOn: manifest.dependsOn,
        testFiles: files
          .filter((file) => file.path.startsWith(TEST_FILES_DIR))
          .map((file) => ({ path: file.path.slice(TEST_FILES_DIR.length), content: file.content })),
      },
      // A folder found on disk is its owner's, the local agent's: its test run gets that agent's
      // secrets; an imported bundle's gets its importer's (docs/skill-sources.md#secrets).
      {
        caller: input.access === undefined ? { ...context.caller, agentId: access.owner } : context.caller,
        ...(context.signal ? { signal: context.signal } : {}),
      },
    );
  }

  /**
   * GetSkillContent: the body of a folder skill the caller may see, `{baseDir}` resolved, and its
   * bundled files. The caller reads the files through GetSkillFile, never from the service's disk, so
   * it gets paths relative to the skill's folder: where the canonical store lives on the host is none
   * of its business (docs/skill-sources.md#progressive-disclosure).
   */
  async content(ref: { name?: string; skillId?: string }, caller: Caller): Promise<SkillContent> {
    const { record, row } = this.resolve(ref, caller);
    const skillMd = (await this.options.folders.readFile(record.name, record.version, "SKILL.md", Number.MAX_SAFE_INTEGER)).toString(
      "utf8",
    );
    return {
      skill: record,
      skillId: row.skillId,
      kind: row.kind === "executable" ? "directory" : "instructions",
      body: resolveBaseDir(parseSkillManifest(skillMd).body),
      baseDir: ".",
      files: await this.options.folders.list(record.name, record.version),
    };
  }

  /** GetSkillFile: one bundled file, traversal-safe and size-capped. */
  async file(ref: { name?: string; skillId?: string }, relative: string, caller: Caller): Promise<{ skill: SkillRecord; content: Buffer }> {
    const { record } = this.resolve(ref, caller);
    return {
      skill: record,
      content: await this.options.folders.readFile(record.name, record.version, relative, this.options.maxFileBytes),
    };
  }

  /** The folder skill a name or an id names, visible to `caller`; NOT_FOUND otherwise, INVALID_ARGUMENT without either. */
  private resolve(ref: { name?: string; skillId?: string }, caller: Caller): { record: SkillRecord; row: SourceVersion } {
    let name = ref.name ?? "";
    if (name === "" && (ref.skillId ?? "") === "") throw new InvalidArgumentError("name", "give the skill's name or its skill_id");
    if (name === "") {
      const byId = this.options.sources.latestOfAll().find((row) => row.skillId === ref.skillId);
      if (!byId) throw new SkillNotFoundError(ref.skillId as string);
      name = byId.name;
    } else {
      validateSkillName(name);
    }
    const record = this.options.registry.get(name);
    if (!record || !canSee(record, caller) || record.status === "deleted") throw new SkillNotFoundError(name);
    const row = this.options.sources.get(name, record.version);
    if (!row) throw new InvalidArgumentError("name", `"${name}" is not kept as a folder: it has no SKILL.md body or bundled files`);
    return { record, row };
  }

  /** ListSkillSources: the folders of a scan (the last one by default) as catalog entries. */
  sourceEntries(report: ScanReport = this.last): SourcedCatalogEntry[] {
    return report.entries.map(sourceCatalogEntry);
  }

  /** GetCatalog's pages (source-pages.ts): `skillsAfter` reads a keyset page of the skills the caller may see. */
  catalogPage(request: PageRequest, caller: Caller, skillsAfter: (after: string | undefined, limit: number) => CatalogEntry[]) {
    return catalogPage(request, {
      skillsAfter: (after, limit) => this.catalog(skillsAfter(after, limit), []),
      folders: this.last.entries,
      listedSkill: (name) => {
        const record = this.options.registry.get(name);
        return record !== undefined && canSee(record, caller);
      },
    });
  }

  /** RescanSkillDirs: a scan now, for an admin (the scan changes every agent's view of the folder skills). */
  rescanFor(caller: Caller, signal?: AbortSignal): Promise<ScanReport> {
    requireAdmin(caller, "RescanSkillDirs");
    return this.rescan(signal);
  }

  /** GetCatalog: the registry's entries the caller may see, merged with the folders of the last scan (or `folders`). */
  catalog(base: readonly CatalogEntry[], folders: readonly SourceEntry[] = this.last.entries): SourcedCatalogEntry[] {
    return mergeCatalog(base, folders, (name) => {
      const record = this.options.registry.get(name);
      const row = record ? this.options.sources.get(name, record.version) : undefined;
      if (!row) return undefined;
      return { kind: row.kind === "executable" ? "directory" : "instructions", skillId: row.skillId, root: row.root, folder: row.folder };
    });
  }

  /** Folders of the last scan by configured directory and status, for metrics. */
  countsBySourceAndStatus(): Array<{ source: string; status: string; count: number }> {
    const counts = new Map<string, number>();
    for (const entry of this.last.entries) {
      const key = `${entry.root}\0${entry.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return [...counts].map(([key, count]) => {
      const [source = "", status = ""] = key.split("\0");
      return { source, status, count };
    });
  }

  /** Whether a record is live, for callers outside the control plane. */
  static isLive(record: SkillRecord): boolean {
    return isLive(record.status);
  }
}

function entryOf(discovered: DiscoveredSkill, status: SourceStatus, reason: string, version: number): SourceEntry {
  return {
    name: discovered.name ?? "",
    root: discovered.root,
    folder: discovered.folder,
    skillId: discovered.id ?? "",
    status,
    reason,
    kind: discovered.manifest ? (discovered.manifest.kind === "executable" ? "directory" : "instructions") : "",
    version,
  };
}
