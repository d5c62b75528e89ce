import { parseDocument } from "yaml";
import { InvalidArgumentError } from "../errors/index.js";
import { validateSecretNames, validateSkillName } from "../control/index.js";
import { normalizePackageDeclarations } from "../environments/index.js";

/** The longest description a SKILL.md may give (docs/skill-sources.md#skillmd). */
export const MAX_DESCRIPTION_CHARS = 1_024;

/** What a `SKILL.md` says: its frontmatter, split into what the service reads and what it keeps. */
export interface SkillManifest {
  readonly name: string;
  readonly description: string;
  /**
   * An executable skill names a Python script in its folder (`entrypoint`); an instructions-only
   * skill has none and is routed by its header, its body disclosed on demand.
   */
  readonly kind: "executable" | "instructions";
  readonly entrypoint: string | undefined;
  /** The test payload given inline (`test_payload`, JSON text or a YAML mapping), if any. */
  readonly testPayload: string | undefined;
  /**
   * Python packages the frontmatter declares (`metadata.requirements`), as written; undefined when
   * it declares none, so that a `requirements.txt` beside it can be told apart (docs/skill-sources.md#packages).
   */
  readonly requirements: readonly string[] | undefined;
  /** Debian packages the frontmatter declares (`metadata.system_packages`), as written; undefined when none. */
  readonly systemPackages: readonly string[] | undefined;
  /** The secret names the frontmatter declares (`metadata.secrets`, docs/skill-sources.md#secrets), checked; empty when none. */
  readonly secrets: readonly string[];
  /**
   * The hosts the frontmatter declares (`metadata.network_allow`, docs/skill-sources.md#hosts), as written;
   * empty when none. Their syntax and the operator's policy are checked when the folder is registered.
   */
  readonly networkAllow: readonly string[];
  /**
   * The skills it needs (`depends_on`: a list of names, or one string of names separated by commas or
   * spaces), with the rules of RegisterSkill's `depends_on` (docs/skill-sources.md#dependencies); empty when none.
   */
  readonly dependsOn: readonly string[];
  /** Every other frontmatter key, kept as metadata. */
  readonly metadata: Readonly<Record<string, unknown>>;
  /** The markdown after the frontmatter: the instructions. */
  readonly body: string;
}

/** A SKILL.md that cannot be read as a skill: the message says which key and why. */
export class SkillManifestError extends InvalidArgumentError {}

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
const READ_KEYS = new Set(["name", "description", "entrypoint", "test_payload", "depends_on"]);

/**
 * Parses a `SKILL.md`: YAML frontmatter between `---` lines (read with the `yaml` library, one
 * document, no custom tags), then the markdown body. `name` (the skill-name rules) and
 * `description` (at most {@link MAX_DESCRIPTION_CHARS} characters) are required; `entrypoint`
 * must be a relative path to a `.py` file inside the folder.
 */
export function parseSkillManifest(text: string): SkillManifest {
  const match = FRONTMATTER.exec(text);
  if (!match) throw new SkillManifestError("SKILL.md", "must start with YAML frontmatter between two '---' lines");
  const document = parseDocument(match[1] ?? "", { uniqueKeys: true, prettyErrors: false });
  if (document.errors.length > 0) {
    throw new SkillManifestError("SKILL.md", `frontmatter is not valid YAML: ${document.errors[0]?.message ?? "parse error"}`);
  }
  const data: unknown = document.toJS({ maxAliasCount: 10 });
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    throw new SkillManifestError("SKILL.md", "frontmatter must be a mapping of keys to values");
  }
  const fields = data as Record<string, unknown>;
  const name = requiredString(fields, "name");
  try {
    validateSkillName(name, "SKILL.md name");
  } catch (error) {
    throw new SkillManifestError("SKILL.md", (error as Error).message, { cause: error });
  }
  const description = requiredString(fields, "description").trim();
  if (description.length > MAX_DESCRIPTION_CHARS) {
    throw new SkillManifestError("SKILL.md", `description is ${description.length} characters; the limit is ${MAX_DESCRIPTION_CHARS}`);
  }
  const entrypoint = optionalEntrypoint(fields["entrypoint"]);
  const packages = declaredPackages(fields["metadata"], entrypoint !== undefined);
  const secrets = declaredSecrets(fields["metadata"], entrypoint !== undefined);
  const networkAllow = declaredHosts(fields["metadata"], entrypoint !== undefined);
  return {
    name,
    description,
    kind: entrypoint === undefined ? "instructions" : "executable",
    entrypoint,
    testPayload: testPayloadText(fields["test_payload"]),
    requirements: packages.requirements,
    systemPackages: packages.systemPackages,
    secrets,
    networkAllow,
    dependsOn: dependencyNames(fields["depends_on"]),
    metadata: Object.fromEntries(Object.entries(fields).filter(([key]) => !READ_KEYS.has(key))),
    body: text.slice(match[0].length),
  };
}

function requiredString(fields: Record<string, unknown>, key: string): string {
  const value = fields[key];
  if (typeof value !== "string" || value.trim() === "") {
    throw new SkillManifestError("SKILL.md", `frontmatter needs "${key}" as a non-empty string`);
  }
  return value;
}

function optionalEntrypoint(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !/^[A-Za-z0-9_][A-Za-z0-9_./-]*\.py$/.test(value) || value.split("/").includes("..")) {
    throw new SkillManifestError(
      "SKILL.md",
      `entrypoint must be a relative path to a .py file inside the folder, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

/**
 * `metadata.requirements` and `metadata.system_packages` (docs/skill-sources.md#packages): lists of
 * strings, each checked by the environments' rules (docs/packages.md#declarations) so a bad one fails
 * the folder before anything is built. A `metadata` that is not a mapping is someone else's field
 * and is only kept. Packages need something to run in: an instructions-only skill declaring them is refused.
 */
function declaredPackages(
  metadata: unknown,
  executable: boolean,
): { requirements: readonly string[] | undefined; systemPackages: readonly string[] | undefined } {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
    return { requirements: undefined, systemPackages: undefined };
  }
  const fields = metadata as Record<string, unknown>;
  const requirements = stringList(fields["requirements"], "metadata.requirements");
  const systemPackages = stringList(fields["system_packages"], "metadata.system_packages");
  if (requirements === undefined && systemPackages === undefined) return { requirements, systemPackages };
  if (!executable) {
    throw new SkillManifestError(
      "SKILL.md",
      "declares packages (metadata.requirements or metadata.system_packages) but has no entrypoint: nothing of an " +
        "instructions-only skill runs here; add an entrypoint or remove the declaration",
    );
  }
  try {
    normalizePackageDeclarations({ requirements: requirements ?? [], systemPackages: systemPackages ?? [] });
  } catch (error) {
    // The environments' message starts with its field (`requirements[2]: …`): here it is metadata's.
    throw new SkillManifestError("SKILL.md", `metadata.${(error as Error).message}`, { cause: error });
  }
  return { requirements, systemPackages };
}

/**
 * `metadata.secrets` (docs/skill-sources.md#secrets): a list of the names of the secrets the
 * entrypoint reads from its environment, checked by RegisterSkill's rules
 * (docs/security.md#declaring-and-delivering). Like packages, they need something to run.
 */
function declaredSecrets(metadata: unknown, executable: boolean): readonly string[] {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return [];
  const names = stringList((metadata as Record<string, unknown>)["secrets"], "metadata.secrets");
  if (names === undefined) return [];
  if (!executable && names.length > 0) {
    throw new SkillManifestError(
      "SKILL.md",
      "declares metadata.secrets but has no entrypoint: nothing of an instructions-only skill runs here; add an entrypoint or remove the declaration",
    );
  }
  try {
    return validateSecretNames("metadata.secrets", names);
  } catch (error) {
    throw new SkillManifestError("SKILL.md", (error as Error).message, { cause: error });
  }
}

/**
 * `metadata.network_allow` (docs/skill-sources.md#hosts): a list of the hosts the entrypoint reaches,
 * under RegisterSkill's rules (docs/security.md#declaring-hosts), which the registration checks
 * against the operator's policy. Like secrets, they need something to run.
 */
function declaredHosts(metadata: unknown, executable: boolean): readonly string[] {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) return [];
  const hosts = stringList((metadata as Record<string, unknown>)["network_allow"], "metadata.network_allow") ?? [];
  if (!executable && hosts.length > 0) {
    throw new SkillManifestError(
      "SKILL.md",
      "declares metadata.network_allow but has no entrypoint: nothing of an instructions-only skill runs here; add an entrypoint or remove the declaration",
    );
  }
  return hosts;
}

function stringList(value: unknown, key: string): readonly string[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((item) => typeof item !== "string")) {
    throw new SkillManifestError("SKILL.md", `${key} must be a list of strings`);
  }
  return value as string[];
}

/** `depends_on`: what it is checked against (existence, cycles) is the registration's pre-flight; here only its shape. */
function dependencyNames(value: unknown): readonly string[] {
  if (value === undefined || value === null) return [];
  const names = typeof value === "string" ? value.split(/[\s,]+/) : stringList(value, "depends_on");
  return (names ?? []).map((name) => name.trim()).filter((name) => name !== "");
}

/** `test_payload` may be JSON text or a mapping written in YAML; either way it is sent as JSON text. */
function testPayloadText(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  throw new SkillManifestError("SKILL.md", "test_payload must be JSON text or a mapping");
}

/** The parameters schema a SKILL.md gives (`parameters_schema`: JSON text or a YAML mapping), or any object. */
export function manifestSchema(manifest: SkillManifest): string {
  const value = manifest.metadata["parameters_schema"];
  if (typeof value === "string" && value.trim() !== "") return value;
  if (typeof value === "object" && value !== null) return JSON.stringify(value);
  return '{"type":"object"}';
}

/**
 * `{baseDir}/references/guide.md` becomes `references/guide.md`, the path GetSkillFile takes as it is;
 * any other `{baseDir}` becomes `.` (the skill's folder).
 */
export function resolveBaseDir(body: string): string {
  return body.replace(/\{baseDir\}\/(?=[\w.-])/g, "").replaceAll("{baseDir}", ".");
}
