import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * Packages made by the test itself, nothing from outside the machine: wheels assembled by hand
 * (a zip with the package, METADATA, WHEEL and RECORD), a source-only distribution whose build
 * script would leave a mark if anything ran it, and a flat apt repository with one .deb.
 * Debian's python3 writes the archives (zipfile, tarfile); dpkg-deb builds the .deb.
 */
const PYTHON = "/usr/bin/python3";

export interface WheelSpec {
  readonly name: string;
  readonly version: string;
  /** Paths inside the wheel → contents. */
  readonly files: Readonly<Record<string, string>>;
  readonly requires?: readonly string[];
}

const WHEEL_SCRIPT = String.raw`
import base64, hashlib, json, sys, zipfile
spec = json.loads(sys.argv[1])
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
dist, version = spec["dist"], spec["version"]
info = f"{dist}-{version}.dist-info"
files = dict(spec["files"])
files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {spec['name']}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in spec["requires"])
files[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: skill-engine-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
record = [f"{p},{digest(c.encode())},{len(c.encode())}" for p, c in files.items()] + [f"{info}/RECORD,,"]
files[f"{info}/RECORD"] = "\n".join(record) + "\n"
with zipfile.ZipFile(spec["out"], "w") as z:
    for p, c in files.items():
        # A fixed date: the same spec makes the same bytes.
        z.writestr(zipfile.ZipInfo(p, date_time=(2024, 1, 1, 0, 0, 0)), c)
`;

/** Writes `<dist>-<version>-py3-none-any.whl` into `dir` and returns its path. */
export function writeWheel(dir: string, spec: WheelSpec): string {
  mkdirSync(dir, { recursive: true });
  const dist = spec.name.replace(/[-_.]+/g, "_");
  const out = path.join(dir, `${dist}-${spec.version}-py3-none-any.whl`);
  execFileSync(PYTHON, ["-c", WHEEL_SCRIPT, JSON.stringify({ ...spec, dist, out, requires: spec.requires ?? [] })]);
  return out;
}

const SDIST_SCRIPT = String.raw`
import io, sys, tarfile
name, version, out, mark = sys.argv[1:5]
setup = f"open({mark!r}, 'w').write('the build script ran')\nfrom setuptools import setup\nsetup(name={name!r}, version={version!r})\n"
members = {"PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", "setup.py": setup}
with tarfile.open(out, "w:gz") as t:
    for p, c in members.items():
        data = c.encode()
        info = tarfile.TarInfo(f"{name}-{version}/{p}")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
`;

/** A source-only release, `<name>-<version>.tar.gz`, whose setup.py writes `mark` if it ever runs. */
export function writeSdist(dir: string, name: string, version: string, mark: string): string {
  mkdirSync(dir, { recursive: true });
  const out = path.join(dir, `${name}-${version}.tar.gz`);
  execFileSync(PYTHON, ["-c", SDIST_SCRIPT, name, version, out, mark]);
  return out;
}

export function sha256Of(file: string): string {
  return createHash("sha256").update(readFileSync(file)).digest("hex");
}

/** sha256 of every file under `root`, by relative path (links by their target's text): two trees compare equal when these do. */
export function treeDigest(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else out[path.relative(root, full)] = entry.isFile() ? sha256Of(full) : `link`;
    }
  };
  walk(root);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)));
}

/**
 * A flat apt repository with one architecture-independent .deb holding a Python module
 * (`/usr/lib/python3/dist-packages/<module>/__init__.py`), and a sources.list naming it with the
 * `copy:` method (apt copies the archive into its cache, as it downloads from a mirror).
 */
export function writeAptRepository(dir: string, pkg: { name: string; version: string; module: string; value: string }): string {
  const root = path.join(dir, "pkg-root");
  const repo = path.join(dir, "repo");
  mkdirSync(path.join(root, "DEBIAN"), { recursive: true });
  mkdirSync(path.join(root, "usr/lib/python3/dist-packages", pkg.module), { recursive: true });
  mkdirSync(repo, { recursive: true });
  writeFileSync(
    path.join(root, "DEBIAN/control"),
    `Package: ${pkg.name}\nVersion: ${pkg.version}\nArchitecture: all\nMaintainer: Skill Engine Tests <tests@example.invalid>\nDescription: a test package\n made by the test suite\n`,
  );
  writeFileSync(path.join(root, "usr/lib/python3/dist-packages", pkg.module, "__init__.py"), `VALUE = ${JSON.stringify(pkg.value)}\n`);
  const deb = path.join(repo, `${pkg.name}_${pkg.version}_all.deb`);
  execFileSync("dpkg-deb", ["--root-owner-group", "-Zgzip", "--build", root, deb], { stdio: "ignore" });
  const control = execFileSync("dpkg-deb", ["-f", deb], { encoding: "utf8" });
  const size = readFileSync(deb).length;
  writeFileSync(
    path.join(repo, "Packages"),
    `${control.trimEnd()}\nFilename: ./${path.basename(deb)}\nSize: ${size}\nSHA256: ${sha256Of(deb)}\n\n`,
  );
  const sources = path.join(dir, "sources.list");
  writeFileSync(sources, `deb [trusted=yes] copy:${repo} ./\n`);
  return sources;
}
