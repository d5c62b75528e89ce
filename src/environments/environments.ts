import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import type Database from "better-sqlite3";
import type { Logger } from "pino";
import { errorMessage, FailedPreconditionError } from "../errors/index.js";
import { type BuiltEnvironment, EnvironmentBuilder, type EnvironmentRuntime } from "./environment-builder.js";
import { environmentId, isEnvironmentId } from "./environment-id.js";
import type { EnvironmentLock } from "./environment-lock.js";
import { ENVIRONMENT_MOUNT, type EnvironmentSettings } from "./environment-settings.js";
import { type EnvironmentRecord, type EnvironmentStatus, EnvironmentStore } from "./environment-store.js";
import { normalizePackageDeclarations, type PackageDeclarations } from "./package-declarations.js";
import { type BuildFailureReason, EnvironmentBuildError } from "./pip-installer.js";
import { checkRuntimes, type RuntimeCheck } from "./runtime-check.js";
import { Slots } from "../concurrency/index.js";

/** Environment builds that run at once (docs/packages.md#limits). */
export const MAX_CONCURRENT_BUILDS = 2;

/** What the environments need of the sandbox image; the execution plane answers it (the lead's wiring). */
export interface SandboxImageInfo {
  /** The image's id (its content hash): part of every environment's id. */
  id(): Promise<string>;
  /** The image's Python version ("3.11.2"), or undefined when it cannot be read now. */
  pythonVersion(): Promise<string | undefined>;
  /** The text of the image's `/var/lib/dpkg/status`: what apt need not fetch. Read once per image id. */
  dpkgStatus(): Promise<string>;
}

/** Hooks for the metrics (docs/packages.md#metrics); every one is optional. */
export interface EnvironmentEvents {
  /** A build put an environment in place; `from` says whether it resolved declarations or installed a lock. */
  built?(seconds: number, from: "declarations" | "lock"): void;
  /** A build failed, and why. */
  failed?(reason: BuildFailureReason | "internal"): void;
  /** The bytes of every ready environment, after each change. */
  bytes?(total: number): void;
}

/** An environment ready to mount: `hostPath` read-only at ENVIRONMENT_MOUNT, with `containerEnv` set in the run. */
export interface EnsuredEnvironment {
  readonly id: string;
  readonly hostPath: string;
  readonly lock: EnvironmentLock;
  readonly containerEnv: Readonly<Record<string, string>>;
}

/** One row of ListEnvironments, its status checked against the disk. */
export type EnvironmentSummary = EnvironmentRecord;

export interface RebuildOutcome {
  readonly id: string;
  readonly result: "rebuilt" | "skipped" | "failed";
  readonly error?: string;
}

export interface EnvironmentsOptions {
  /** registry.db (the `skill_environments` table). */
  readonly db: Database.Database;
  /** SKILL_ENGINE_HOME: environments live in `<home>/environments/`, never under the sandbox directory. */
  readonly home: string;
  readonly settings: EnvironmentSettings;
  readonly image: SandboxImageInfo;
  readonly events?: EnvironmentEvents;
  readonly logger?: Logger;
  /** @default () => new Date() */
  readonly now?: () => Date;
}

/** Uses of one environment closer together than this are recorded once (last_used_at needs no finer grain than the grace). */
const TOUCH_EVERY_MS = 60_000;

/**
 * The environments (docs/packages.md): one per distinct set of declared packages for the sandbox
 * image, built once, outside any run, in `<home>/environments/<id>/`, and recorded with its lock.
 * Concurrent requests for one id share one build; a complete directory on disk is reused; a
 * recorded environment whose directory is gone is rebuilt from its lock, file for file.
 */
export class Environments {
  private readonly root: string;
  private readonly builder: EnvironmentBuilder;
  private readonly store: EnvironmentStore;
  private readonly inFlight = new Map<string, Promise<EnsuredEnvironment>>();
  private readonly touched = new Map<string, number>();
  private readonly now: () => Date;

  /**
   * Builds of different sets at once, whoever asked for them (docs/packages.md#limits): one agent
   * registering many sets waits for slots rather than filling the host with installers.
   */
  private readonly buildSlots = new Slots(MAX_CONCURRENT_BUILDS);

  constructor(private readonly options: EnvironmentsOptions) {
    this.root = path.join(options.home, "environments");
    this.builder = new EnvironmentBuilder(this.root, options.settings);
    this.store = new EnvironmentStore(options.db);
    this.now = options.now ?? (() => new Date());
  }

  /** The id a set of declarations gets with the current image; undefined when both lists are empty. */
  async idFor(declarations: { requirements?: readonly string[]; systemPackages?: readonly string[] }): Promise<string | undefined> {
    const normalized = normalizePackageDeclarations(declarations);
    if (normalized.requirements.length === 0 && normalized.systemPackages.length === 0) return undefined;
    return environmentId(await this.options.image.id(), normalized);
  }

  /**
   * The environment for these declarations, built first when needed (the caller waits: a
   * registration's test run needs it). Undefined when both lists are empty. Invalid declarations
   * throw InvalidArgumentError; a failed build throws FailedPreconditionError with the installer's
   * one-line cause, and leaves nothing behind.
   */
  async ensure(declarations: {
    requirements?: readonly string[];
    systemPackages?: readonly string[];
  }): Promise<EnsuredEnvironment | undefined> {
    const normalized = normalizePackageDeclarations(declarations);
    if (normalized.requirements.length === 0 && normalized.systemPackages.length === 0) return undefined;
    const id = environmentId(await this.options.image.id(), normalized);
    return this.once(id, () => this.obtain(id, normalized));
  }

  /**
   * A recorded environment by id, for a run: rebuilt from its lock when its directory is gone.
   * An id with no record and no directory is FailedPrecondition (the version names an environment
   * this host never built and cannot rebuild without its lock).
   */
  async ensureById(id: string): Promise<EnsuredEnvironment> {
    const record = isEnvironmentId(id) ? this.store.get(id) : undefined;
    if (record === undefined) {
      const existing = isEnvironmentId(id) ? await this.builder.existing(id) : undefined;
      if (existing === undefined) throw new FailedPreconditionError(`environment ${id} is not recorded here and has no directory to use`);
      return this.ready(existing);
    }
    return this.once(id, () => this.obtain(id, { requirements: record.requirements, systemPackages: record.systemPackages }));
  }

  /** ListEnvironments: every recorded environment; a ready one whose directory is gone is reported (and recorded) missing. */
  async list(): Promise<EnvironmentSummary[]> {
    const summaries: EnvironmentSummary[] = [];
    for (const record of this.store.list()) {
      let status: EnvironmentStatus = record.status;
      if (status === "ready" && !this.inFlight.has(record.id) && (await this.builder.existing(record.id)) === undefined) {
        this.store.setStatus(record.id, "missing");
        status = "missing";
      }
      summaries.push({ ...record, status });
    }
    return summaries;
  }

  /**
   * RebuildEnvironments: installs each recorded environment again from its lock, one at a time;
   * with `missingOnly`, only those whose directory is gone. A present one is swapped for the new
   * build when it is complete (docs/packages.md#rebuilds).
   */
  async rebuild(options: { readonly missingOnly: boolean }): Promise<RebuildOutcome[]> {
    const outcomes: RebuildOutcome[] = [];
    for (const record of this.store.list()) {
      const present = (await this.builder.existing(record.id)) !== undefined;
      if (record.lock === undefined || (options.missingOnly && present)) {
        outcomes.push({ id: record.id, result: "skipped" });
        continue;
      }
      const lock = record.lock;
      try {
        await this.once(record.id, () => this.buildAndRecord(record.id, record, lock, present));
        outcomes.push({ id: record.id, result: "rebuilt" });
      } catch (error) {
        outcomes.push({ id: record.id, result: "failed", error: errorMessage(error) });
      }
    }
    return outcomes;
  }

  /**
   * Removes environments no version refers to and none used within `graceMs`, with their rows;
   * also directories no row records (older than the grace) and build directories a crashed process
   * left (older than the build time limit). Returns the ids removed.
   */
  async removeUnused(referencedIds: Iterable<string>, graceMs = this.options.settings.unusedGraceMs): Promise<string[]> {
    const referenced = new Set(referencedIds);
    const cutoff = this.now().getTime() - graceMs;
    const removed: string[] = [];
    const recorded = new Set<string>();
    for (const record of this.store.list()) {
      recorded.add(record.id);
      if (referenced.has(record.id) || this.inFlight.has(record.id) || record.lastUsedAt.getTime() > cutoff) continue;
      await this.removeDir(record.id);
      this.store.remove(record.id);
      removed.push(record.id);
    }
    for (const name of await readdir(this.root).catch(() => [] as string[])) {
      const full = path.join(this.root, name);
      const modified = await stat(full).then(
        (s) => s.mtimeMs,
        () => undefined,
      );
      if (modified === undefined) continue;
      if (isEnvironmentId(name)) {
        if (recorded.has(name) || referenced.has(name) || this.inFlight.has(name) || modified > cutoff) continue;
        await this.removeDir(name);
        removed.push(name);
      } else if (name.startsWith(".build-") && modified < this.now().getTime() - 2 * this.options.settings.buildTimeoutMs) {
        await rm(full, { recursive: true, force: true });
      }
    }
    if (removed.length > 0) {
      this.options.logger?.info({ environments: removed }, "removed environments no version uses");
      this.reportBytes();
    }
    return removed;
  }

  /** CheckRuntimes: the sandbox's Python against the installer's, and whether packages can be had (docs/packages.md#runtimes). */
  checkRuntimes(): Promise<RuntimeCheck> {
    return checkRuntimes(this.options.settings, this.options.image);
  }

  private once(id: string, work: () => Promise<EnsuredEnvironment>): Promise<EnsuredEnvironment> {
    const running = this.inFlight.get(id);
    if (running !== undefined) return running;
    const promise = work().finally(() => this.inFlight.delete(id));
    this.inFlight.set(id, promise);
    return promise;
  }

  private async obtain(id: string, declarations: PackageDeclarations): Promise<EnsuredEnvironment> {
    const existing = await this.builder.existing(id);
    const record = this.store.get(id);
    if (existing !== undefined) {
      if (record?.status !== "ready") {
        this.store.saveReady({ id, ...declarations, lock: existing.lock, sizeBytes: existing.sizeBytes, at: this.now() });
      } else {
        this.touch(id);
      }
      return this.ready(existing);
    }
    return this.buildAndRecord(id, declarations, record?.lock, false);
  }

  private async buildAndRecord(
    id: string,
    declarations: PackageDeclarations,
    lock: EnvironmentLock | undefined,
    replace: boolean,
  ): Promise<EnsuredEnvironment> {
    const started = performance.now();
    const from = lock === undefined ? "declarations" : "lock";
    this.options.logger?.info({ environment: id, from, ...declarations }, "building environment");
    let built: BuiltEnvironment;
    try {
      built = await this.buildSlots.run(() =>
        this.builder.build({ id, declarations, lock, statusFile: () => this.imageStatusFile() }, replace),
      );
    } catch (error) {
      const reason = error instanceof EnvironmentBuildError ? error.reason : "internal";
      this.options.events?.failed?.(reason);
      this.options.logger?.warn({ environment: id, from, reason, err: error }, "environment build failed");
      // A recorded environment keeps its lock for the next try; a new set leaves no row at all.
      if (lock !== undefined) this.store.setStatus(id, "failed", errorMessage(error));
      throw error;
    }
    const seconds = (performance.now() - started) / 1000;
    this.store.saveReady({ id, ...declarations, lock: built.lock, sizeBytes: built.sizeBytes, at: this.now() });
    this.options.events?.built?.(seconds, from);
    this.options.logger?.info({ environment: id, from, seconds, bytes: built.sizeBytes, files: built.lock.length }, "environment built");
    this.reportBytes();
    return this.ready(built);
  }

  private ready(built: BuiltEnvironment): EnsuredEnvironment {
    return { id: built.id, hostPath: built.hostPath, lock: built.lock, containerEnv: containerEnvironment(built.runtime) };
  }

  private touch(id: string): void {
    const now = this.now().getTime();
    if (now - (this.touched.get(id) ?? 0) < TOUCH_EVERY_MS) return;
    this.touched.set(id, now);
    this.store.touch(id, new Date(now));
  }

  private reportBytes(): void {
    if (this.options.events?.bytes === undefined) return;
    const total = this.store
      .list()
      .filter((record) => record.status === "ready")
      .reduce((sum, record) => sum + record.sizeBytes, 0);
    this.options.events.bytes(total);
  }

  /** Renamed out of the way first, so a half-removed tree never sits under an id. */
  private async removeDir(id: string): Promise<void> {
    const doomed = path.join(this.root, `.build-removed-${id}-${randomBytes(6).toString("hex")}`);
    try {
      await rename(path.join(this.root, id), doomed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
      throw error;
    }
    await rm(doomed, { recursive: true, force: true });
  }

  /** The image's dpkg status, copied out once per image id into `<root>/.image-status/`. */
  private async imageStatusFile(): Promise<string> {
    const imageId = await this.options.image.id();
    const dir = path.join(this.root, ".image-status");
    const file = path.join(dir, `${createHash("sha256").update(imageId).digest("hex").slice(0, 32)}.status`);
    if (
      await stat(file).then(
        () => true,
        () => false,
      )
    )
      return file;
    await mkdir(dir, { recursive: true });
    const temporary = `${file}.tmp-${randomBytes(6).toString("hex")}`;
    await writeFile(temporary, await this.options.image.dpkgStatus(), { mode: 0o644 });
    await rename(temporary, file);
    return file;
  }
}

/** The variables a run sets for its environment, mounted at ENVIRONMENT_MOUNT (docs/packages.md#layout). */
export function containerEnvironment(runtime: EnvironmentRuntime): Record<string, string> {
  const inContainer = (dirs: readonly string[]): string => dirs.map((dir) => `${ENVIRONMENT_MOUNT}/${dir}`).join(":");
  return {
    PYTHONPATH: inContainer(runtime.pythonPath),
    ...(runtime.libraryPath.length > 0 ? { LD_LIBRARY_PATH: inContainer(runtime.libraryPath) } : {}),
  };
}
