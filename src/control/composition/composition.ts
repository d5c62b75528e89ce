import type Database from "better-sqlite3";
import type { Caller } from "../../identity/index.js";
import type { SkillRecord, SkillRegistry } from "../registry/index.js";
import type { CanonicalStore } from "../store/index.js";
import { CompositionCore } from "./composition-core.js";
import type { CatalogEntry, CompositionSettings, DependencyFile, DependencyReport, ResolvedSkill } from "./composition-types.js";
import type { ConditionEvaluator } from "./condition.js";
import { ConditionHost } from "./condition-host.js";
import { DeclarationsFile } from "./declarations-file.js";
import type { CompositionDefinition, SkillRef } from "./definition.js";
import { dependencyFiles } from "./dependency-files.js";
import { assertMandatory, blockers, catalogEntry, dependencyReport, dependencyWarnings, retestWarnings } from "./dependency-status.js";
import { type DeclaredDependencies, DependencyStore } from "./dependency-store.js";
import { evictionVictims } from "./eviction.js";
import { preflightComposed, preflightPlain } from "./preflight.js";

/**
 * Skills built from skills (docs/composition.md): the pre-flight of composed definitions and of
 * plain skills' dependencies, the dependency graph over the registry, the read-only copies a
 * plain skill's run needs, dependents, warnings and the catalog. A thin front: each part lives in
 * its own file over the shared {@link CompositionCore}.
 */
export class Composition {
  readonly dependencies: DependencyStore;
  private readonly core: CompositionCore;
  private readonly declarations: DeclarationsFile;

  constructor(
    registry: SkillRegistry,
    store: CanonicalStore,
    db: Database.Database,
    readonly settings: CompositionSettings,
    /** Where steps' conditions are evaluated (docs/composition.md#where-conditions-run); its process starts on first use. */
    readonly conditions: ConditionEvaluator = new ConditionHost(),
  ) {
    this.dependencies = new DependencyStore(db);
    this.core = new CompositionCore(registry, store, this.dependencies, settings);
    this.declarations = new DeclarationsFile(this.core);
  }

  /** Stops the condition evaluator's process; conditions asked for afterwards fail as the service's shutdown. */
  async close(): Promise<void> {
    await this.conditions.close();
  }

  /** Records what a version declares (registry and `.dependencies.json`), before the version is committed. */
  async record(name: string, version: number, declared: DeclaredDependencies): Promise<void> {
    await this.declarations.record(name, version, declared);
  }

  declaredOf(record: SkillRecord): DeclaredDependencies {
    return this.core.declaredOf(record);
  }

  isComposed(record: SkillRecord): boolean {
    return this.core.isComposed(record);
  }

  resolve(ref: SkillRef, caller: Caller | undefined, context: string): ResolvedSkill {
    return this.core.resolve(ref, caller, context);
  }

  preflightComposed(name: string, definition: CompositionDefinition, parametersSchema: string, caller: Caller): string[] {
    return preflightComposed(this.core, name, definition, parametersSchema, caller);
  }

  preflightPlain(name: string, dependsOn: readonly string[], caller: Caller): string[] {
    return preflightPlain(this.core, name, dependsOn, caller);
  }

  async dependencyFiles(rootName: string, dependsOn: readonly string[]): Promise<DependencyFile[]> {
    return dependencyFiles(this.core, rootName, dependsOn);
  }

  async readCode(resolved: ResolvedSkill): Promise<string> {
    return this.core.readCode(resolved);
  }

  dependents(name: string): SkillRecord[] {
    return this.core.dependents(name);
  }

  /** Live skills that name `name` unpinned: the ones a new version of it affects. */
  unpinnedDependents(name: string): SkillRecord[] {
    return this.core.dependents(name).filter((skill) => this.core.declaredOf(skill).dependsOn.includes(name));
  }

  blockers(record: SkillRecord): string[] {
    return blockers(this.core, record);
  }

  retestWarnings(record: SkillRecord): string[] {
    return retestWarnings(this.core, record);
  }

  warnings(record: SkillRecord): string[] {
    return dependencyWarnings(this.core, record);
  }

  report(record: SkillRecord): DependencyReport {
    return dependencyReport(this.core, record);
  }

  catalogEntry(record: SkillRecord): CatalogEntry {
    return catalogEntry(this.core, record);
  }

  /** Records the declarations a registry lacks; returns how many were recovered. */
  async backfill(): Promise<number> {
    return this.declarations.backfill();
  }

  assertMandatory(names: readonly string[]): void {
    assertMandatory(this.core, names);
  }

  evictionVictims(owner: string, except: string, now: Date): SkillRecord[] {
    return evictionVictims(this.core, owner, except, now);
  }
}
