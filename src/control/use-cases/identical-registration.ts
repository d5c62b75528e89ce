import { createHash } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import type { Caller } from "../../identity/index.js";
import { isLive, type SkillRecord, type SkillVisibility, type VersionPackages } from "../registry/index.js";
import { contentHash } from "../store/index.js";
import type { SkillKind } from "../composition/index.js";
import { accessForRegistration } from "./registration-rules.js";
import type { SkillCore } from "./skill-core.js";

/**
 * Everything a registration would store in a version (docs/skill-lifecycle.md#identical-registrations),
 * after validation and intake: the form it would be committed in.
 */
export interface RegistrationDeclarations {
  readonly name: string;
  readonly kind: SkillKind;
  /** The code intake passed (a composed skill: its serialized definition). */
  readonly code: string;
  readonly description: string;
  readonly parametersSchema: string;
  readonly testPayload: string;
  /** The declared dependencies as the pre-flight resolved them. */
  readonly dependsOn: readonly string[];
  /** Normalised, as the environment was prepared; undefined: none. */
  readonly packages?: VersionPackages | undefined;
  readonly testFiles?: readonly { readonly path: string; readonly content: Uint8Array }[];
  readonly secrets?: readonly string[];
  /** Canonical. */
  readonly networkAllow?: readonly string[];
  /** As requested: undefined keeps the skill's. */
  readonly visibility: SkillVisibility | undefined;
  readonly system?: boolean;
}

/**
 * Whether `existing`'s active version is exactly what a registration declares, so that the
 * registration changes nothing (docs/skill-lifecycle.md#identical-registrations): a live skill whose
 * active version has the same code (by content hash), description, parameters schema and test
 * payload (as JSON values: spacing and key order aside), dependencies, packages, test files (paths
 * and bytes), secret names and hosts (as sets), and whose owner, visibility and system flag the
 * registration would keep. Example queries are routing evidence, not part of a version, and
 * `on_duplicate` is a screen's policy: neither makes a registration different.
 */
export function isActiveVersion(
  core: SkillCore,
  existing: SkillRecord | undefined,
  next: RegistrationDeclarations,
  caller: Caller,
): existing is SkillRecord {
  if (!existing || !isLive(existing.status)) return false;
  if (existing.contentHash !== contentHash(next.code) || existing.description !== next.description) return false;
  if (!sameJson(existing.parametersSchema, next.parametersSchema) || !sameJson(existing.testPayload, next.testPayload)) return false;
  const declared = core.composition.declaredOf(existing);
  if (declared.kind !== next.kind || !sameSet(declared.dependsOn, next.dependsOn)) return false;
  if (!sameSet(existing.requirements, next.packages?.requirements ?? [])) return false;
  if (!sameSet(existing.systemPackages, next.packages?.systemPackages ?? [])) return false;
  if (!sameSet(existing.secrets, next.secrets ?? []) || !sameSet(existing.networkAllow, next.networkAllow ?? [])) return false;
  if (next.system === true && !existing.system) return false;
  const access = accessForRegistration(existing, { name: next.name, visibility: next.visibility }, caller);
  if (access.owner !== existing.owner || access.visibility !== existing.visibility) return false;
  const stored = core.registry.version(existing.name, existing.version)?.testFiles ?? [];
  const sent = next.testFiles ?? [];
  if (stored.length !== sent.length) return false;
  const storedDigests = new Map(stored.map((file) => [file.path, file.sha256]));
  return sent.every((file) => storedDigests.get(file.path) === createHash("sha256").update(file.content).digest("hex"));
}

function sameJson(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    return false;
  }
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const left = new Set(a);
  const right = new Set(b);
  return left.size === right.size && [...left].every((item) => right.has(item));
}
