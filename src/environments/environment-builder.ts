import { randomBytes } from "node:crypto";
import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fetchDebianPackages } from "./debian-packages.js";
import { settleTree } from "./environment-files.js";
import { type EnvironmentLock, type LockedFile, parseLock, serializeLock, sortLock } from "./environment-lock.js";
import { ENVIRONMENT_MOUNT, type EnvironmentSettings } from "./environment-settings.js";
import { runInstaller } from "./installer-process.js";
import type { PackageDeclarations } from "./package-declarations.js";
import { EnvironmentBuildError, installWheels, type PipSource } from "./pip-installer.js";

/**
 * Paths inside an environment, relative to its directory, that a container puts on its search
 * paths (docs/packages.md#layout): always `site` (pip's target) first, then the Python folders and
 * library folders of unpacked Debian packages.
 */
export interface EnvironmentRuntime {
  readonly pythonPath: readonly string[];
  readonly libraryPath: readonly string[];
}

/** A finished environment on disk. */
export interface BuiltEnvironment {
  readonly id: string;
  readonly hostPath: string;
  readonly lock: EnvironmentLock;
  readonly sizeBytes: number;
  readonly runtime: EnvironmentRuntime;
}

export interface BuildRequest {
  readonly id: string;
  readonly declarations: PackageDeclarations;
  /** Given: install exactly these files (a rebuild); absent: resolve the declarations (a first build). */
  readonly lock?: EnvironmentLock;
  /** The sandbox image's dpkg status, needed only when Debian packages are declared. */
  readonly statusFile?: () => Promise<string>;
}

/** Python folders a Debian package installs into, as the image's own Python would find them. */
const DEBIAN_PYTHON_DIRS = [
  "deb/usr/lib/python3/dist-packages",
  "deb/usr/lib/python3.11/dist-packages",
  "deb/usr/local/lib/python3.11/dist-packages",
];

const LOCK_FILE = "lock.json";
const RUNTIME_FILE = "runtime.json";
const DECLARATIONS_FILE = "environment.json";

/**
 * Builds environments under `<root>/<id>/` (docs/packages.md#building): everything is installed into
 * `<root>/.build-<id>-<random>/env`, measured, made read-only for others, and renamed into place
 * only when complete; whatever happens, the build directory is removed, so a half-built
 * environment is never left where a run could mount it.
 */
export class EnvironmentBuilder {
  constructor(
    private readonly root: string,
    private readonly settings: EnvironmentSettings,
  ) {}

  pathOf(id: string): string {
    return path.join(this.root, id);
  }

  /** The environment at `<root>/<id>` when it is complete (its lock written last), else undefined. */
  async existing(id: string): Promise<BuiltEnvironment | undefined> {
    const dir = this.pathOf(id);
    let lockText: string;
    let runtimeText: string;
    try {
      lockText = await readFile(path.join(dir, LOCK_FILE), "utf8");
      runtimeText = await readFile(path.join(dir, RUNTIME_FILE), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const runtime = JSON.parse(runtimeText) as EnvironmentRuntime & { sizeBytes?: number };
    return {
      id,
      hostPath: dir,
      lock: parseLock(lockText),
      sizeBytes: runtime.sizeBytes ?? 0,
      runtime: { pythonPath: runtime.pythonPath, libraryPath: runtime.libraryPath },
    };
  }

  /**
   * Builds and puts the environment in place. With `replace`, a complete environment already at
   * the id is swapped out for the new one (a rebuild); without, one that appeared meanwhile (another
   * process built the same set) is kept and returned, and this build is dropped.
   */
  async build(request: BuildRequest, replace = false): Promise<BuiltEnvironment> {
    const started = Date.now();
    const deadline = started + this.settings.buildTimeoutMs;
    const timeoutSeconds = Math.round(this.settings.buildTimeoutMs / 1000);
    const wantsWheels = request.lock ? request.lock.some((e) => e.kind === "wheel") : request.declarations.requirements.length > 0;
    const wantsDebs = request.lock ? request.lock.some((e) => e.kind === "deb") : request.declarations.systemPackages.length > 0;
    const source = wantsWheels ? this.pipSource() : undefined;
    await mkdir(this.root, { recursive: true, mode: 0o755 });
    const buildDir = path.join(this.root, `.build-${request.id}-${randomBytes(6).toString("hex")}`);
    const env = path.join(buildDir, "env");
    const work = path.join(buildDir, "work");
    try {
      await mkdir(path.join(env, "site"), { recursive: true });
      for (const sub of ["home", "tmp"]) await mkdir(path.join(work, sub), { recursive: true });
      const lock: LockedFile[] = [];
      if (source !== undefined) {
        const what = request.lock ? { lock: request.lock } : { requirements: request.declarations.requirements };
        const installed = await installWheels({
          python: this.settings.pipPython,
          source,
          target: path.join(env, "site"),
          workDir: work,
          what,
          deadline,
          timeoutSeconds,
        });
        if (request.lock) checkSameWheels(installed, request.lock);
        lock.push(...installed);
      }
      if (wantsDebs) {
        if (request.statusFile === undefined)
          throw new EnvironmentBuildError("not-configured", "Debian packages need the sandbox image's dpkg status");
        const what = request.lock ? { lock: request.lock } : { packages: request.declarations.systemPackages };
        lock.push(
          ...(await fetchDebianPackages({
            statusFile: await request.statusFile(),
            sourceList: this.settings.aptSourceList,
            target: path.join(env, "deb"),
            workDir: work,
            what,
            deadline,
            timeoutSeconds,
          })),
        );
      }
      const pythonPath = ["site", ...(await existingDirs(env, DEBIAN_PYTHON_DIRS))];
      await this.compile(env, pythonPath, deadline);
      if (Date.now() > deadline) throw timeLimit(timeoutSeconds);
      const tree = await settleTree(env);
      if (tree.bytes > this.settings.maxBytes) {
        throw new EnvironmentBuildError(
          "too-large",
          `the environment is ${mib(tree.bytes)} installed, over its limit of ${mib(this.settings.maxBytes)} (SKILL_ENGINE_ENV_MAX_BYTES); nothing was kept`,
        );
      }
      const built: BuiltEnvironment = {
        id: request.id,
        hostPath: this.pathOf(request.id),
        lock: sortLock(lock),
        sizeBytes: tree.bytes,
        runtime: { pythonPath, libraryPath: tree.libraryDirs },
      };
      await writeFile(
        path.join(env, DECLARATIONS_FILE),
        `${JSON.stringify({ id: request.id, requirements: request.declarations.requirements, system_packages: request.declarations.systemPackages })}\n`,
        { mode: 0o644 },
      );
      await writeFile(path.join(env, RUNTIME_FILE), `${JSON.stringify({ ...built.runtime, sizeBytes: tree.bytes })}\n`, { mode: 0o644 });
      // Written last: a directory with a lock is a complete environment (existing() relies on it).
      await writeFile(path.join(env, LOCK_FILE), `${serializeLock(built.lock)}\n`, { mode: 0o644 });
      return await this.putInPlace(env, buildDir, built, replace);
    } finally {
      await rm(buildDir, { recursive: true, force: true });
    }
  }

  private async putInPlace(env: string, buildDir: string, built: BuiltEnvironment, replace: boolean): Promise<BuiltEnvironment> {
    const target = this.pathOf(built.id);
    // Swapped out into the build directory, which the caller removes; put back if the new one cannot go in.
    const old = replace && (await isDirectory(target)) ? path.join(buildDir, "old") : undefined;
    if (old !== undefined) await rename(target, old);
    try {
      await rename(env, target);
      return built;
    } catch (error) {
      if (old !== undefined) await rename(old, target).catch(() => undefined);
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== "EEXIST" && code !== "ENOTEMPTY") throw error;
      // Another process finished the same set first: its environment is as good as this one.
      const other = await this.existing(built.id);
      if (other === undefined) throw error;
      return other;
    }
  }

  /**
   * Bytecode compiled ahead, because the mount is read-only and every run would compile again:
   * unchecked-hash pycs (the sources never change), named by their path in the container, with a
   * fixed hash seed, so two builds of one lock write the same bytes. A file that does not compile
   * is left to fail at import, as it would without this step.
   */
  private async compile(env: string, pythonPath: readonly string[], deadline: number): Promise<void> {
    for (const dir of pythonPath) {
      await runInstaller({
        command: this.settings.pipPython,
        args: [
          "-m",
          "compileall",
          "-q",
          "-q",
          "--invalidation-mode",
          "unchecked-hash",
          "-d",
          `${ENVIRONMENT_MOUNT}/${dir}`,
          path.join(env, dir),
        ],
        env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin", LANG: "C.UTF-8", PYTHONHASHSEED: "0" },
        cwd: env,
        deadline,
      });
    }
  }

  private pipSource(): PipSource {
    if (this.settings.pipIndexUrl !== undefined) return { kind: "index", url: this.settings.pipIndexUrl };
    if (this.settings.wheelhouse !== undefined) return { kind: "wheelhouse", dir: this.settings.wheelhouse };
    throw new EnvironmentBuildError(
      "not-configured",
      "requirements need a package source and none is configured: set SKILL_ENGINE_PIP_INDEX_URL (the operator's package index) " +
        "or SKILL_ENGINE_WHEELHOUSE (a folder of wheels) (docs/packages.md#sources)",
    );
  }
}

/** The files pip installed from a lock are the lock's, one for one. */
function checkSameWheels(installed: readonly LockedFile[], lock: EnvironmentLock): void {
  const key = (e: LockedFile): string => `${e.name} ${e.sha256}`;
  const want = lock
    .filter((e) => e.kind === "wheel")
    .map(key)
    .sort();
  const got = installed.map(key).sort();
  if (want.join("\n") !== got.join("\n")) {
    throw new EnvironmentBuildError("hash-mismatch", "pip installed other files than the lock names; the environment was not kept");
  }
}

async function existingDirs(root: string, candidates: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const dir of candidates) if (await isDirectory(path.join(root, dir))) found.push(dir);
  return found;
}

async function isDirectory(dir: string): Promise<boolean> {
  try {
    return (await stat(dir)).isDirectory();
  } catch {
    return false;
  }
}

function timeLimit(timeoutSeconds: number): EnvironmentBuildError {
  return new EnvironmentBuildError(
    "timeout",
    `the build took longer than its limit of ${timeoutSeconds} s (SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS); nothing was kept`,
  );
}

function mib(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(bytes < 1024 * 1024 ? 3 : 1)} MiB`;
}
