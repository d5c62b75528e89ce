import { FailedPreconditionError, InternalError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import { canSee } from "../access/index.js";
import { isLive, type SkillRecord, type SkillRegistry } from "../registry/index.js";
import { type CanonicalStore, contentHash, locationOf } from "../store/index.js";
import type { CompositionSettings, ResolvedSkill } from "./composition-types.js";
import { formatSkillRef, parseSkillRef, type SkillRef } from "./definition.js";
import type { DeclaredDependencies, DependencyStore, SkillKind } from "./dependency-store.js";

/**
 * What every part of composition shares: the registry, the canonical store, the declarations,
 * and the lookups over them (a reference resolved, a graph node's edges, a skill's dependents,
 * a version's code).
 */
export class CompositionCore {
  constructor(
    readonly registry: SkillRegistry,
    readonly store: CanonicalStore,
    readonly dependencies: DependencyStore,
    readonly settings: CompositionSettings,
  ) {}

  declaredOf(record: SkillRecord): DeclaredDependencies {
    return this.dependencies.get(record.name, record.version);
  }

  isComposed(record: SkillRecord): boolean {
    return this.declaredOf(record).kind === "composed";
  }

  /**
   * The skill a reference names, as `context` needs it: present (and visible to `caller` when
   * given), live, and with the pinned version when there is one. FAILED_PRECONDITION otherwise.
   */
  resolve(ref: SkillRef, caller: Caller | undefined, context: string): ResolvedSkill {
    const shown = formatSkillRef(ref);
    const record = this.registry.get(ref.name);
    if (!record || (caller && !canSee(record, caller)))
      throw new FailedPreconditionError(`${context}: no skill named "${ref.name}" is registered`);
    if (!isLive(record.status)) {
      const why = record.statusReason ? ` (${record.statusReason})` : "";
      throw new FailedPreconditionError(`${context}: "${ref.name}" is ${record.status}${why}`);
    }
    if (!record.enabled)
      throw new FailedPreconditionError(`${context}: "${ref.name}" is disabled (switched off by "${record.disabledBy}")`);
    if (ref.version === undefined || ref.version === record.version) {
      return { ref, record, version: record.version, contentHash: record.contentHash, declared: this.declaredOf(record) };
    }
    const pinned = this.registry.version(ref.name, ref.version);
    if (!pinned) throw new FailedPreconditionError(`${context}: "${ref.name}" has no version ${ref.version} (asked for "${shown}")`);
    return {
      ref,
      record,
      version: pinned.version,
      contentHash: pinned.contentHash,
      declared: this.dependencies.get(ref.name, pinned.version),
    };
  }

  /** Direct dependencies of a graph node ("name" or "name@version"); a missing skill has none. */
  edgesOf(key: string): readonly string[] {
    return this.declaredOfKey(key)?.dependsOn ?? [];
  }

  kindOfKey(key: string): SkillKind | undefined {
    return this.declaredOfKey(key)?.kind;
  }

  /** Live skills whose active version names `name` (any version of it), by name. */
  dependents(name: string): SkillRecord[] {
    const dependents: SkillRecord[] = [];
    for (const declaration of this.dependencies.declaring(name)) {
      if (declaration.name === name) continue;
      const skill = this.registry.get(declaration.name);
      // Only what a live skill's active version declares counts.
      if (skill && isLive(skill.status) && skill.version === declaration.version) dependents.push(skill);
    }
    return dependents;
  }

  /** The code of a resolved version from the canonical store, checked against the registry's hash. */
  async readCode(resolved: ResolvedSkill): Promise<string> {
    const { record, version } = resolved;
    const location = locationOf(record.status);
    if (version === record.version) {
      const active = await this.store.readActive(record.name, location);
      if (active !== undefined && contentHash(active) === resolved.contentHash) return active;
    }
    const fromHistory = await this.store.readVersion(record.name, version, location);
    if (fromHistory === undefined || contentHash(fromHistory) !== resolved.contentHash) {
      throw new InternalError(
        `the canonical code of "${record.name}" v${version} is missing or altered and no intact copy exists in its history`,
      );
    }
    return fromHistory;
  }

  private declaredOfKey(key: string): DeclaredDependencies | undefined {
    const ref = parseSkillRef(key, "dependency");
    const record = this.registry.get(ref.name);
    if (!record) return undefined;
    return this.dependencies.get(ref.name, ref.version ?? record.version);
  }
}
