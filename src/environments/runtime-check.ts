import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { errorMessage } from "../errors/index.js";
import type { EnvironmentSettings } from "./environment-settings.js";
import { runInstaller } from "./installer-process.js";

/** CheckRuntimes' answer (docs/packages.md#runtimes). */
export interface RuntimeCheck {
  /** The sandbox image's Python ("3.11.2"); undefined when the image could not be asked. */
  readonly sandboxPython: string | undefined;
  /** The Python whose pip installs wheels (SKILL_ENGINE_PIP_PYTHON), and that pip's version. */
  readonly installerPython: string | undefined;
  readonly pip: string | undefined;
  /** Both Pythons are the same major.minor: wheels pip picks fit the sandbox. */
  readonly pythonMatches: boolean;
  /** Where Python packages come from, and whether it answers now. */
  readonly packageSource: {
    readonly kind: "index" | "wheelhouse" | "none";
    readonly location: string;
    readonly reachable: boolean;
    readonly detail: string;
  };
  /** Whether Debian packages can be fetched: apt-get and dpkg-deb on the host, the image's dpkg status readable. */
  readonly debian: { readonly available: boolean; readonly detail: string };
}

const CHECK_TIMEOUT_MS = 20_000;
const PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export async function checkRuntimes(
  settings: EnvironmentSettings,
  image: { pythonVersion(): Promise<string | undefined>; dpkgStatus(): Promise<string> },
): Promise<RuntimeCheck> {
  const [sandboxPython, installerPython, pip, packageSource, debian] = await Promise.all([
    image.pythonVersion().catch(() => undefined),
    firstLine(settings.pipPython, ["-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"]),
    firstLine(settings.pipPython, ["-m", "pip", "--version"]),
    checkSource(settings),
    checkDebian(image),
  ]);
  const minor = (version: string | undefined): string | undefined => /^\d+\.\d+/.exec(version ?? "")?.[0];
  return {
    sandboxPython,
    installerPython,
    pip: pip?.split(" from ")[0],
    pythonMatches: minor(sandboxPython) !== undefined && minor(sandboxPython) === minor(installerPython),
    packageSource,
    debian,
  };
}

async function checkSource(settings: EnvironmentSettings): Promise<RuntimeCheck["packageSource"]> {
  if (settings.pipIndexUrl !== undefined) {
    const location = settings.pipIndexUrl;
    if (location.startsWith("file:")) {
      try {
        const projects = (await readdir(fileURLToPath(location))).length;
        return { kind: "index", location, reachable: true, detail: `${projects} project${projects === 1 ? "" : "s"}` };
      } catch (error) {
        return { kind: "index", location, reachable: false, detail: errorMessage(error) };
      }
    }
    try {
      const response = await fetch(location, { signal: AbortSignal.timeout(CHECK_TIMEOUT_MS), redirect: "follow" });
      await response.body?.cancel();
      return { kind: "index", location, reachable: response.status < 500, detail: `HTTP ${response.status}` };
    } catch (error) {
      return { kind: "index", location, reachable: false, detail: errorMessage(error) };
    }
  }
  if (settings.wheelhouse !== undefined) {
    const location = settings.wheelhouse;
    try {
      const wheels = (await readdir(location)).filter((name) => name.endsWith(".whl")).length;
      return { kind: "wheelhouse", location, reachable: true, detail: `${wheels} wheel${wheels === 1 ? "" : "s"}` };
    } catch (error) {
      return { kind: "wheelhouse", location, reachable: false, detail: errorMessage(error) };
    }
  }
  return {
    kind: "none",
    location: "",
    reachable: false,
    detail: "no package source: set SKILL_ENGINE_PIP_INDEX_URL or SKILL_ENGINE_WHEELHOUSE to allow requirements",
  };
}

async function checkDebian(image: { dpkgStatus(): Promise<string> }): Promise<RuntimeCheck["debian"]> {
  const apt = await firstLine("apt-get", ["--version"]);
  if (apt === undefined) return { available: false, detail: "apt-get is not installed on this host" };
  const dpkgDeb = await firstLine("dpkg-deb", ["--version"]);
  if (dpkgDeb === undefined) return { available: false, detail: "dpkg-deb is not installed on this host" };
  try {
    const status = await image.dpkgStatus();
    const installed = status.split("\n").filter((line) => line.startsWith("Package: ")).length;
    return { available: true, detail: `${apt}; the sandbox image holds ${installed} Debian packages` };
  } catch (error) {
    return { available: false, detail: `the sandbox image's dpkg status cannot be read: ${errorMessage(error)}` };
  }
}

/** The first line a command prints on stdout when it exits 0, else undefined. */
async function firstLine(command: string, args: readonly string[]): Promise<string | undefined> {
  let line: string | undefined;
  const outcome = await runInstaller({
    command,
    args,
    env: { PATH, LANG: "C.UTF-8" },
    cwd: "/",
    deadline: Date.now() + CHECK_TIMEOUT_MS,
    onStdoutLine: (text) => {
      if (line === undefined && text.trim() !== "") line = text.trim();
    },
  });
  return outcome.exitCode === 0 ? line : undefined;
}
