import type { SkillRecord } from "../registry/index.js";
import type { SkillRef } from "./definition.js";
import type { DeclaredDependencies, SkillKind } from "./dependency-store.js";

/** docs/composition.md#limits. */
export interface CompositionSettings {
  /** Longest chain of composed skills inside composed skills. */
  readonly maxDepth: number;
  /** Live composed skills one agent may own; the next registration evicts the least used. */
  readonly composedSkillsPerAgent: number;
}

/** A skill reference resolved against the registry: the record, and the version the reference picks. */
export interface ResolvedSkill {
  readonly ref: SkillRef;
  readonly record: SkillRecord;
  readonly version: number;
  readonly contentHash: string;
  readonly declared: DeclaredDependencies;
}

/** A file placed read-only beside a plain skill in its run directory: a dependency's code. */
export interface DependencyFile {
  readonly name: string;
  readonly content: string;
}

export type CatalogStatus = "ready" | "blocked" | "failed" | "inactive";

export interface CatalogEntry {
  readonly name: string;
  readonly kind: SkillKind;
  readonly status: CatalogStatus;
  readonly version: number;
  readonly dependsOn: readonly string[];
  readonly blockedBy: readonly string[];
  readonly error: string;
  readonly warnings: readonly string[];
}

/** What GetSkillDependencies answers. */
export interface DependencyReport {
  readonly dependsOn: readonly string[];
  readonly dependents: readonly string[];
  readonly loadOrder: readonly string[];
  readonly warnings: readonly string[];
}

/** A mandatory skill (SKILL_ENGINE_MANDATORY_SKILLS) is missing or not ready: the service must not start. */
export class MandatorySkillError extends Error {
  constructor(
    readonly skillName: string,
    reason: string,
  ) {
    super(`boot failure: mandatory skill "${skillName}" ${reason} (SKILL_ENGINE_MANDATORY_SKILLS)`);
    this.name = "MandatorySkillError";
  }
}
