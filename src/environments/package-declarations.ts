import { InvalidArgumentError } from "../errors/index.js";

/**
 * What a version may declare (docs/packages.md#declarations): PEP 508 requirements in a strict
 * subset, and Debian package names. Anything that could reach the installer as an option or a
 * source (a leading "-", a URL, a path, a hash, a marker, a line break) is refused here, so the
 * installer only ever sees a name, extras and version specifiers.
 */

/** Requirements one version may declare. */
export const MAX_REQUIREMENTS = 64;
/** Characters in one requirement, as declared. */
export const MAX_REQUIREMENT_LENGTH = 200;
/** Debian packages one version may declare. */
export const MAX_SYSTEM_PACKAGES = 32;

/** A declaration in its normalised form: sorted, de-duplicated. */
export interface PackageDeclarations {
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
}

/** PEP 508's distribution name (also an extra's name). */
const NAME = "[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?";
/** PEP 440's public version with an optional local part, as packaging's VERSION_PATTERN, case-insensitive. */
const VERSION =
  "v?(?:[0-9]+!)?[0-9]+(?:\\.[0-9]+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?" +
  "(?:-[0-9]+|[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?(?:[-_.]?dev[-_.]?[0-9]*)?(?:\\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?";
const REQUIREMENT = new RegExp(`^ *(${NAME}) *(?:\\[ *(${NAME}(?: *, *${NAME})*)? *\\])? *(.*?) *$`, "i");
const SPECIFIER = /^(===|==|!=|~=|<=|>=|<|>) *(.+?)$/;
const VERSION_ONLY = new RegExp(`^${VERSION}$`, "i");
const VERSION_WILDCARD = new RegExp(`^${VERSION}\\.\\*$`, "i");
/** `===` compares strings: anything without a separator or a character the installer could read otherwise. */
const ARBITRARY_VERSION = /^[A-Za-z0-9._+!-]+$/;
const DEBIAN_NAME = /^[a-z0-9][a-z0-9+.-]{1,62}$/;

/** PEP 503's normal form: lowercase, every run of "-", "_" and "." one "-". */
export function normalizeDistributionName(name: string): string {
  return name.toLowerCase().replace(/[-_.]+/g, "-");
}

/** Validates and normalises both lists; throws InvalidArgumentError naming the first bad entry and its rule. */
export function normalizePackageDeclarations(input: {
  readonly requirements?: readonly string[];
  readonly systemPackages?: readonly string[];
}): PackageDeclarations {
  return {
    requirements: normalizeRequirements(input.requirements ?? []),
    systemPackages: normalizeSystemPackages(input.systemPackages ?? []),
  };
}

export function normalizeRequirements(requirements: readonly string[]): readonly string[] {
  if (requirements.length > MAX_REQUIREMENTS) {
    throw new InvalidArgumentError("requirements", `at most ${MAX_REQUIREMENTS} requirements may be declared (got ${requirements.length})`);
  }
  return sortedUnique(requirements.map((text, i) => normalizeRequirement(text, `requirements[${i}]`)));
}

export function normalizeSystemPackages(packages: readonly string[]): readonly string[] {
  if (packages.length > MAX_SYSTEM_PACKAGES) {
    throw new InvalidArgumentError(
      "system_packages",
      `at most ${MAX_SYSTEM_PACKAGES} Debian packages may be declared (got ${packages.length})`,
    );
  }
  return sortedUnique(
    packages.map((name, i) => {
      const field = `system_packages[${i}]`;
      if (!DEBIAN_NAME.test(name)) {
        throw new InvalidArgumentError(
          field,
          `"${printable(name)}" is not a Debian package name (2 to 63 of a-z, 0-9, "+", "-", ".", starting with a letter or digit)`,
        );
      }
      // apt-get reads a trailing "-" as "remove this package".
      if (name.endsWith("-")) throw new InvalidArgumentError(field, `"${name}" ends with "-", which apt reads as a removal`);
      return name;
    }),
  );
}

/** One requirement → `name[extra,...]op version,...` with the name and extras in PEP 503 form, specifiers sorted. */
export function normalizeRequirement(text: string, field: string): string {
  if (text.length === 0) throw new InvalidArgumentError(field, "is empty");
  if (text.length > MAX_REQUIREMENT_LENGTH) {
    throw new InvalidArgumentError(field, `is longer than ${MAX_REQUIREMENT_LENGTH} characters`);
  }
  refuseSourcesAndOptions(text, field);
  const match = REQUIREMENT.exec(text);
  if (!match) throw new InvalidArgumentError(field, `"${printable(text)}" is not a requirement of the form name[extras] op version, ...`);
  const name = normalizeDistributionName(match[1] as string);
  const extras = sortedUnique(
    (match[2] ?? "")
      .split(",")
      .map((extra) => extra.trim())
      .filter((e) => e !== "")
      .map(normalizeDistributionName),
  );
  const rest = match[3] ?? "";
  const specifiers = rest === "" ? [] : rest.split(",").map((part) => normalizeSpecifier(part.trim(), field));
  return `${name}${extras.length > 0 ? `[${extras.join(",")}]` : ""}${sortedUnique(specifiers).join(",")}`;
}

function refuseSourcesAndOptions(text: string, field: string): void {
  // Only the plain space separates tokens: tabs, line breaks and other spaces could split one
  // declaration into two lines or two arguments for the installer.
  if (/[^\x21-\x7e ]/.test(text)) {
    throw new InvalidArgumentError(field, "holds a character other than printable ASCII and the space (no tabs, line breaks or Unicode)");
  }
  if (/(^| )-/.test(text)) {
    throw new InvalidArgumentError(field, 'holds a word starting with "-": installer options are not accepted, only a requirement');
  }
  if (text.includes("@") || text.includes("://")) {
    throw new InvalidArgumentError(
      field,
      "is a direct reference or URL: packages come only from the configured index or wheelhouse (docs/packages.md#sources)",
    );
  }
  if (/[/\\]/.test(text) || text.trimStart().startsWith(".") || text.trimStart().startsWith("~")) {
    throw new InvalidArgumentError(
      field,
      "is a path: packages come only from the configured index or wheelhouse (docs/packages.md#sources)",
    );
  }
  if (text.includes("#"))
    throw new InvalidArgumentError(field, 'holds "#" (a comment or a hash): a lock records hashes, a declaration does not');
  if (text.includes(";"))
    throw new InvalidArgumentError(field, 'has an environment marker (";"): markers are not accepted, the sandbox is one platform');
  if (/[()]/.test(text)) throw new InvalidArgumentError(field, "has parentheses: write specifiers without them, e.g. name>=1.0,<2");
}

function normalizeSpecifier(part: string, field: string): string {
  const match = SPECIFIER.exec(part);
  if (!match) {
    throw new InvalidArgumentError(field, `"${part}" is not a version specifier (==, !=, <=, >=, <, >, ~= or === and a version)`);
  }
  const operator = match[1] as string;
  const version = match[2] as string;
  const valid =
    operator === "==="
      ? ARBITRARY_VERSION.test(version)
      : VERSION_ONLY.test(version) || ((operator === "==" || operator === "!=") && VERSION_WILDCARD.test(version));
  if (!valid) throw new InvalidArgumentError(field, `"${version}" is not a PEP 440 version for ${operator}`);
  if (operator === "~=" && !/^v?(?:[0-9]+!)?[0-9]+\.[0-9]+/i.test(version)) {
    throw new InvalidArgumentError(field, `~= needs a version of at least two parts (e.g. ~=1.4), got "${version}"`);
  }
  return `${operator}${operator === "===" ? version : version.toLowerCase()}`;
}

function sortedUnique(items: readonly string[]): string[] {
  return [...new Set(items)].sort();
}

/** For messages: what was sent, with control characters shown, never a multi-line echo. */
function printable(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text).slice(1, -1);
}
