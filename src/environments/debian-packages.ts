import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { type EnvironmentLock, type LockedFile } from "./environment-lock.js";
import { type InstallerOutcome, runInstaller } from "./installer-process.js";
import { EnvironmentBuildError } from "./pip-installer.js";

export interface DebInstall {
  /** The sandbox image's `/var/lib/dpkg/status`: apt fetches only what the image does not hold. */
  readonly statusFile: string;
  /**
   * A sources.list of its own (docs/packages.md#debian-packages), read into a private list
   * directory by `apt-get update` before the fetch; undefined: the host's own sources and lists.
   */
  readonly sourceList: string | undefined;
  /** Where each package's files are unpacked (`dpkg-deb -x`). */
  readonly target: string;
  /** Scratch space (apt's cache and archives); removed with the build. */
  readonly workDir: string;
  readonly what: { readonly packages: readonly string[] } | { readonly lock: EnvironmentLock };
  readonly deadline: number;
  readonly timeoutSeconds: number;
}

const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/**
 * Fetches Debian packages on the host, never in a sandbox: `apt-get install --download-only`
 * against the sandbox image's dpkg status, so only what the image lacks is downloaded (with its
 * dependencies, without recommends), into a private cache. Each archive is then unpacked with
 * `dpkg-deb -x`: files only, no maintainer script runs. A rebuild asks for each locked
 * `name=version` and accepts only the locked files, by sha256.
 */
export async function fetchDebianPackages(install: DebInstall): Promise<LockedFile[]> {
  const apt = path.join(install.workDir, "apt");
  const archives = path.join(apt, "archives");
  await mkdir(path.join(archives, "partial"), { recursive: true });
  await mkdir(path.join(apt, "lists", "partial"), { recursive: true });
  await mkdir(path.join(apt, "source-parts"), { recursive: true });
  const options = [
    "-o",
    `Dir::State::status=${install.statusFile}`,
    "-o",
    `Dir::Cache=${path.join(apt, "cache")}`,
    "-o",
    `Dir::Cache::archives=${archives}`,
    // Only private directories are written: the host's dpkg lock is not ours to take.
    "-o",
    "Debug::NoLocking=true",
    ...(install.sourceList === undefined
      ? []
      : [
          "-o",
          `Dir::Etc::SourceList=${install.sourceList}`,
          "-o",
          `Dir::Etc::SourceParts=${path.join(apt, "source-parts")}`,
          "-o",
          `Dir::State::Lists=${path.join(apt, "lists")}`,
        ]),
  ];
  const run = (args: readonly string[]): Promise<InstallerOutcome> =>
    runInstaller({
      command: "apt-get",
      args,
      env: { PATH, HOME: path.join(install.workDir, "home"), LANG: "C.UTF-8", DEBIAN_FRONTEND: "noninteractive" },
      cwd: install.workDir,
      deadline: install.deadline,
    });
  if (install.sourceList !== undefined) {
    const update = await run(["update", "-q", ...options]);
    if (update.exitCode !== 0) throw aptFailure(update, install.timeoutSeconds, "apt-get update");
  }
  const wanted =
    "lock" in install.what ? install.what.lock.filter((e) => e.kind === "deb").map((e) => `${e.name}=${e.version}`) : install.what.packages;
  const fetch = await run(["install", "-y", "-q", "--download-only", "--no-install-recommends", ...options, "--", ...wanted]);
  if (fetch.exitCode !== 0) throw aptFailure(fetch, install.timeoutSeconds, "apt-get");
  const files = (await readdir(archives)).filter((name) => name.endsWith(".deb")).sort();
  const fetched: LockedFile[] = [];
  for (const file of files) {
    const full = path.join(archives, file);
    const fields = await dpkgDeb(["--field", full, "Package", "Version"], install);
    const name = /^Package: (\S+)$/m.exec(fields)?.[1];
    const version = /^Version: (\S+)$/m.exec(fields)?.[1];
    if (name === undefined || version === undefined) {
      throw new EnvironmentBuildError("installer", `${file} has no Package or Version field; it is not a Debian package`);
    }
    fetched.push({ kind: "deb", name, version, sha256: await sha256File(full), file });
  }
  if ("lock" in install.what) checkAgainstLock(fetched, install.what.lock);
  await mkdir(install.target, { recursive: true });
  for (const file of files) await dpkgDeb(["-x", path.join(archives, file), install.target], install);
  return fetched;
}

function checkAgainstLock(fetched: readonly LockedFile[], lock: EnvironmentLock): void {
  const locked = new Map(lock.filter((e) => e.kind === "deb").map((e) => [e.name, e]));
  for (const entry of fetched) {
    const expected = locked.get(entry.name);
    if (expected === undefined || expected.sha256 !== entry.sha256) {
      throw new EnvironmentBuildError(
        "hash-mismatch",
        expected === undefined
          ? `apt fetched ${entry.file}, which the lock does not name (the sandbox image now lacks a package it held)`
          : `${entry.file} has a different sha256 from the locked one: the apt sources serve another file under that version`,
      );
    }
    locked.delete(entry.name);
  }
  // A locked package the image now holds itself is simply not fetched again; nothing to do for it.
}

async function dpkgDeb(args: readonly string[], install: DebInstall): Promise<string> {
  let stdout = "";
  const outcome = await runInstaller({
    command: "dpkg-deb",
    args,
    env: { PATH, LANG: "C.UTF-8" },
    cwd: install.workDir,
    deadline: install.deadline,
    onStdoutLine: (line) => {
      if (stdout.length < 4096) stdout += `${line}\n`;
    },
  });
  if (outcome.exitCode !== 0) throw aptFailure(outcome, install.timeoutSeconds, "dpkg-deb");
  return stdout;
}

function aptFailure(outcome: InstallerOutcome, timeoutSeconds: number, tool: string): EnvironmentBuildError {
  if (outcome.timedOut) {
    return new EnvironmentBuildError(
      "timeout",
      `fetching the Debian packages took longer than the build's limit of ${timeoutSeconds} s ` +
        "(SKILL_ENGINE_ENV_BUILD_TIMEOUT_SECONDS); the installer was stopped and nothing was kept",
    );
  }
  if (outcome.spawnError !== undefined) {
    return new EnvironmentBuildError("installer", `could not start ${tool}: ${outcome.spawnError} (docs/packages.md#runtimes)`);
  }
  const lines = outcome.stderr.split("\n").map((line) => line.trim());
  const error = lines.find((line) => line.startsWith("E: "))?.slice(3) ?? lines.filter((line) => line !== "").pop();
  const cause = error ?? `${tool} exited with ${outcome.exitCode ?? "a signal"}`;
  const reason = /^Unable to locate package |^Version '.*' for '.*' was not found|^Package '.*' has no installation candidate/.test(cause)
    ? "not-found"
    : "installer";
  return new EnvironmentBuildError(reason, reason === "not-found" ? cause : `${tool}: ${cause}`);
}

function sha256File(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash("sha256");
    createReadStream(file)
      .on("data", (chunk) => hash.update(chunk))
      .on("error", reject)
      .on("end", () => resolve(hash.digest("hex")));
  });
}
