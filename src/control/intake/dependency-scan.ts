import type { IntakeWarning } from "./code-intake.js";
import { type ModuleProvider, providerOf } from "./import-aliases.js";
import type { ImportedModule } from "./python-syntax.js";

/** What a version declares beyond the standard library (docs/packages.md). */
export interface DeclaredPackageNames {
  /** PEP 508 requirement specifiers, as declared. */
  readonly requirements: readonly string[];
  /** Debian package names, as declared. */
  readonly systemPackages: readonly string[];
}

/** What the scan looks at (docs/packages.md#the-dependency-scan). */
export interface DependencyScanInput extends DeclaredPackageNames {
  /** The code's imports, as the parser listed them. */
  readonly imports: readonly ImportedModule[];
  /**
   * Top-level modules the skill brings itself: its dependency skills (placed beside it by name),
   * a folder skill's own modules and packages.
   */
  readonly localModules: Iterable<string>;
  /** The file the imports come from, quoted in each message; omitted for the skill's own code. */
  readonly file?: string;
}

/** The rule id of the scan's warnings. */
export const MISSING_DEPENDENCY_RULE = "missing-dependency";

/** PEP 503's normalised form of a distribution name: lower case, each run of `-`, `_` and `.` one `-`. */
export function normalizeDistributionName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** The distribution a PEP 508 specifier names (`PyYAML>=6`, `requests[socks]; python_version>"3"` …), or "". */
export function requirementName(specifier: string): string {
  return /^\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)/.exec(specifier)?.[1] ?? "";
}

/** A declared Debian package's name without an architecture qualifier or version (`python3-yaml:amd64`, `python3-yaml=6.0-3`). */
function debianName(declared: string): string {
  return declared.trim().split(/[:=]/)[0]?.toLowerCase() ?? "";
}

/** The declared package that provides `provider`'s module, if one does (docs/packages.md#the-dependency-scan). */
export function declaredProvider(provider: ModuleProvider, declared: DeclaredPackageNames): string | undefined {
  const top = provider.module.split(".")[0] ?? provider.module;
  const pipNames = new Set([...provider.pip, provider.module, top].map(normalizeDistributionName));
  const requirement = declared.requirements.find((r) => pipNames.has(normalizeDistributionName(requirementName(r))));
  if (requirement !== undefined) return requirementName(requirement);
  const debianNames = new Set([provider.debian, `python3-${top.toLowerCase().replace(/_/g, "-")}`].filter((n) => n !== undefined));
  return declared.systemPackages.find((p) => debianNames.has(debianName(p)));
}

/** What to declare for a module, as the warning and the missing-module cause quote it. */
function quoted(names: readonly string[]): string {
  return `[${names.map((n) => JSON.stringify(n)).join(", ")}]`;
}

/**
 * The scan (warn only; docs/packages.md#the-dependency-scan): one `missing-dependency` warning
 * per imported module that is not in the standard library, not imported only with an ImportError
 * fallback, not one of the skill's own modules, and not provided by a declared package. Modules
 * that the alias table groups (`google.protobuf.json_format`, `google.protobuf.message`) warn
 * once, at the first line.
 */
export function missingDependencyWarnings(input: DependencyScanInput): IntakeWarning[] {
  const local = new Set(input.localModules);
  const warned = new Set<string>();
  const warnings: IntakeWarning[] = [];
  const ordered = [...input.imports].sort((a, b) => a.line - b.line);
  for (const imported of ordered) {
    if (imported.stdlib || imported.optional) continue;
    if (local.has(imported.module.split(".")[0] ?? imported.module)) continue;
    const provider = providerOf(imported.module);
    if (warned.has(provider.module) || declaredProvider(provider, input) !== undefined) continue;
    warned.add(provider.module);
    const where = input.file === undefined ? "" : `${input.file} `;
    const debian = provider.debian === undefined ? "" : ` (or system_packages ${quoted([provider.debian])})`;
    warnings.push({
      ruleId: MISSING_DEPENDENCY_RULE,
      category: "dependencies",
      severity: "warning",
      message:
        `${where}imports "${provider.module}", which no declared package provides: ` +
        `declare requirements ${quoted([provider.pip[0]])}${debian}; see docs/packages.md`,
      line: imported.line,
    });
  }
  return warnings;
}

/**
 * The top-level modules a skill's own files make importable (docs/packages.md#the-dependency-scan):
 * the stem of every `.py` file and every folder that holds one, wherever it sits (a skill may put
 * any of its folders on `sys.path`). `helper.py` gives `helper`; `lib/util/text.py` gives `text`,
 * `lib` and `util`.
 */
export function localModulesOf(paths: Iterable<string>): Set<string> {
  const modules = new Set<string>();
  for (const path of paths) {
    if (!path.endsWith(".py")) continue;
    const parts = path.split("/").filter((part) => part !== "" && part !== ".");
    const file = parts.pop();
    if (file !== undefined) modules.add(file.slice(0, -".py".length));
    for (const folder of parts) modules.add(folder);
  }
  return modules;
}
