import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { FailedPreconditionError } from "../errors/index.js";
import { type EnvironmentLock, lockedRequirementsFile, lockFromPipReport, type LockedFile } from "./environment-lock.js";
import { type InstallerOutcome, runInstaller } from "./installer-process.js";
import { normalizeDistributionName } from "./package-declarations.js";

/** Where Python packages come from (docs/packages.md#sources): the operator's index, or a folder of wheels. */
export type PipSource = { readonly kind: "index"; readonly url: string } | { readonly kind: "wheelhouse"; readonly dir: string };

/** Why a build failed, for the metrics (docs/packages.md#metrics). */
export type BuildFailureReason =
  "not-configured" | "not-found" | "source-only" | "conflict" | "hash-mismatch" | "timeout" | "too-large" | "installer";

/** A build that failed for a reason the operator or the declaring agent can act on; `reason` is for the metrics. */
export class EnvironmentBuildError extends FailedPreconditionError {
  constructor(
    readonly reason: BuildFailureReason,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface PipInstall {
  /** The host's Python that runs pip (docs/packages.md#runtimes). */
  readonly python: string;
  readonly source: PipSource;
  /** Where the packages go (`--target`). */
  readonly target: string;
  /** Scratch space for the report, the requirements file, pip's HOME and TMPDIR; removed with the build. */
  readonly workDir: string;
  /** Either normalised requirements (a first build) or a lock (a rebuild of exactly its files). */
  readonly what: { readonly requirements: readonly string[] } | { readonly lock: EnvironmentLock };
  readonly deadline: number;
  readonly timeoutSeconds: number;
}

/**
 * Installs wheels with the host's pip into `target` and returns what it installed as lock entries.
 * pip runs isolated from every configuration file and `PIP_*` variable of the host, with binary
 * wheels only, so no package's build script runs (docs/packages.md#binary-wheels-only); a rebuild
 * names every file by version and hash and installs nothing else (`--require-hashes --no-deps`).
 */
export async function installWheels(install: PipInstall): Promise<LockedFile[]> {
  const report = path.join(install.workDir, "pip-report.json");
  const args = [
    "-m",
    "pip",
    "--isolated",
    "install",
    "-vv",
    "--only-binary=:all:",
    "--no-input",
    "--disable-pip-version-check",
    "--no-cache-dir",
    "--no-compile",
    "--progress-bar=off",
    "--target",
    install.target,
    "--report",
    report,
    ...(install.source.kind === "index" ? ["--index-url", install.source.url] : ["--no-index", "--find-links", install.source.dir]),
  ];
  if ("lock" in install.what) {
    const requirementsFile = path.join(install.workDir, "locked-requirements.txt");
    await writeFile(requirementsFile, lockedRequirementsFile(install.what.lock), { mode: 0o600 });
    args.push("--require-hashes", "--no-deps", "-r", requirementsFile);
  } else {
    // Declarations are checked never to start with "-" (package-declarations.ts); "--" says so to pip too.
    args.push("--", ...install.what.requirements);
  }
  const skipped = new SkippedLinks();
  const outcome = await runInstaller({
    command: install.python,
    args,
    env: {
      PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
      HOME: path.join(install.workDir, "home"),
      TMPDIR: path.join(install.workDir, "tmp"),
      LANG: "C.UTF-8",
      // Read no pip.conf at all (global, user or site); --isolated drops the PIP_* variables.
      PIP_CONFIG_FILE: "/dev/null",
      PYTHONNOUSERSITE: "1",
    },
    cwd: install.workDir,
    deadline: install.deadline,
    onStdoutLine: (line) => skipped.read(line),
  });
  if (outcome.exitCode !== 0) throw pipFailure(outcome, skipped, install.timeoutSeconds);
  await forgetRequested(install.target);
  return lockFromPipReport(await readFile(report, "utf8"));
}

/**
 * pip marks the distributions named on its command line with a REQUESTED file (PEP 376), listed in
 * RECORD. A first build names the declarations and a rebuild every locked file, so the marks would
 * differ between the two; they mean nothing in an environment, and are dropped so that a rebuild
 * writes the same files, byte for byte.
 */
async function forgetRequested(target: string): Promise<void> {
  for (const entry of await readdir(target)) {
    if (!entry.endsWith(".dist-info")) continue;
    const requested = path.join(target, entry, "REQUESTED");
    const record = path.join(target, entry, "RECORD");
    await rm(requested, { force: true });
    const lines = (await readFile(record, "utf8").catch(() => undefined))?.split("\n");
    if (lines !== undefined) await writeFile(record, lines.filter((line) => !line.startsWith(`${entry}/REQUESTED,`)).join("\n"));
  }
}

/** pip's `-vv` lines saying why it passed over a file: the difference between "no such package" and "only sources". */
class SkippedLinks {
  readonly sourceOnly = new Set<string>();
  readonly incompatible = new Set<string>();

  read(line: string): void {
    const sources = /^\s*Skipping link: No sources permitted for ([^:]+):/.exec(line);
    if (sources && this.sourceOnly.size < 64) this.sourceOnly.add(normalizeDistributionName((sources[1] as string).trim()));
    const tags = /^\s*Skipping link: none of the wheel's tags \(([^)]*)\) are compatible[^:]*: \S*\/([^/\s]+)$/.exec(line);
    if (tags && this.incompatible.size < 64) this.incompatible.add(`${decodeURIComponent(tags[2] as string)} (${tags[1] as string})`);
  }
}

function pipFailure(outcome: InstallerOutcome, skipped: SkippedLinks, timeoutSeconds: number): EnvironmentBuildError {
  if (outcome.timedOut) {
    return new EnvironmentBuildError(
      "timeout",
      `installing the requirements took longer than the build's limit of ${timeoutSeconds} s ` +
        "(SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS); the installer was stopped and nothing was kept",
    );
  }
  if (outcome.spawnError !== undefined) {
    return new EnvironmentBuildError("installer", `could not start pip: ${outcome.spawnError} (docs/packages.md#runtimes)`);
  }
  const errors = outcome.stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("ERROR: "))
    .map((line) => line.slice("ERROR: ".length));
  const notFound = errors.find((line) => line.startsWith("No matching distribution found for "));
  if (notFound !== undefined) {
    const name = normalizeDistributionName(notFound.slice("No matching distribution found for ".length).split(/[\s<>=!~[]/)[0] ?? "");
    if (skipped.sourceOnly.has(name)) {
      return new EnvironmentBuildError(
        "source-only",
        `${notFound}: "${name}" is offered only as a source distribution, and only binary wheels are installed ` +
          "(a source distribution's build script would run on the host; docs/packages.md#binary-wheels-only)",
      );
    }
    const incompatible = [...skipped.incompatible].slice(0, 3);
    return new EnvironmentBuildError(
      "not-found",
      incompatible.length > 0 ? `${notFound} (wheels that do not fit the sandbox's Python: ${incompatible.join(", ")})` : notFound,
    );
  }
  const conflict = errors.find((line) => line.startsWith("Cannot install ") || line.startsWith("ResolutionImpossible"));
  if (conflict !== undefined) return new EnvironmentBuildError("conflict", conflict);
  if (errors.some((line) => line.includes("DO NOT MATCH THE HASHES"))) {
    return new EnvironmentBuildError(
      "hash-mismatch",
      "a file the lock names has a different sha256 at the source now: the index or wheelhouse changed a released file",
    );
  }
  const last = outcome.stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("WARNING: "))
    .pop();
  return new EnvironmentBuildError("installer", `pip failed (exit ${outcome.exitCode ?? "killed"}): ${errors[0] ?? last ?? "no message"}`);
}
