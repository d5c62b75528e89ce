import type Database from "better-sqlite3";
import { FailedPreconditionError, InternalError, InvalidArgumentError } from "../../errors/index.js";
import type { Caller } from "../../identity/index.js";
import { canSee } from "../access/index.js";
import { isLive, type SkillRecord, type SkillRegistry } from "../registry/index.js";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { type CanonicalStore, contentHash, locationOf, writeFileAtomic } from "../store/index.js";
import { compileCondition, type ConditionEvaluator } from "./condition.js";
import { ConditionHost } from "./condition-host.js";
import {
  type CompositionDefinition,
  formatSkillRef,
  isDefinitionText,
  isRecord,
  parseSkillRef,
  parseStoredDefinition,
  type SkillRef,
} from "./definition.js";
import { type DeclaredDependencies, DependencyStore, type SkillKind } from "./dependency-store.js";
import { CycleError, loadOrder, nestingDepth } from "./graph.js";
import { referencesOf, TemplateError } from "./template.js";

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

/** The canonical store's copy of every declaration (docs/composition.md#storage). */
const DECLARATIONS_FILE = ".dependencies.json";

const PLAIN: DeclaredDependencies = { kind: "plain", dependsOn: [] };

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

/** The module file a dependency becomes; `skill.py` is the skill itself. */
const RESERVED_MODULE = "skill";

/**
 * Skills built from skills (docs/composition.md): the pre-flight of composed definitions and of
 * plain skills' dependencies, the dependency graph over the registry, the read-only copies a
 * plain skill's run needs, dependents, warnings and the catalog.
 */
export class Composition {
  readonly dependencies: DependencyStore;
  /** Serializes rewrites of the declarations file. */
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly registry: SkillRegistry,
    private readonly store: CanonicalStore,
    db: Database.Database,
    readonly settings: CompositionSettings,
    /** Where steps' conditions are evaluated (docs/composition.md#where-conditions-run); its process starts on first use. */
    readonly conditions: ConditionEvaluator = new ConditionHost(),
  ) {
    this.dependencies = new DependencyStore(db);
  }

  /** Stops the condition evaluator's process; conditions asked for afterwards fail as the service's shutdown. */
  async close(): Promise<void> {
    await this.conditions.close();
  }

  /**
   * Records what a version declares, in the registry and in the canonical store's
   * `.dependencies.json` (docs/composition.md#storage), before the version is committed.
   */
  async record(name: string, version: number, declared: DeclaredDependencies): Promise<void> {
    // No row already means a plain skill with no dependencies: the common registration writes
    // (and fsyncs) nothing here, unless an earlier, uncommitted attempt left a row for this number
    // (docs/performance.md#registration).
    if (declared.kind === "plain" && declared.dependsOn.length === 0 && !this.dependencies.has(name, version)) return;
    this.dependencies.record(name, version, declared);
    await this.writeDeclarations();
  }

  private get declarationsFile(): string {
    return path.join(this.store.directory, DECLARATIONS_FILE);
  }

  private writeDeclarations(): Promise<void> {
    const next = this.writing.then(() => {
      const skills: Record<string, Record<string, { kind: SkillKind; depends_on: readonly string[] }>> = {};
      for (const { name, version, declared } of this.dependencies.all()) {
        (skills[name] ??= {})[String(version)] = { kind: declared.kind, depends_on: declared.dependsOn };
      }
      return writeFileAtomic(this.declarationsFile, `${JSON.stringify({ format: 1, skills }, null, 2)}\n`);
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

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

  /**
   * Pre-flight of a composed definition (docs/composition.md#pre-flight): step skills exist, are
   * visible and live; templates read only parameters and earlier steps; conditions parse; no
   * cycle; nesting within the limit. Returns the step references to record as its dependencies.
   */
  preflightComposed(name: string, definition: CompositionDefinition, parametersSchema: string, caller: Caller): string[] {
    const properties = declaredProperties(parametersSchema);
    const earlier = new Set<string>();
    definition.steps.forEach((step, index) => {
      const field = `steps[${index}]`;
      this.resolve(step.skill, caller, `${field} (${step.id})`);
      if (step.when !== "") compileCondition(step.when, earlier, `${field}.when`);
      checkReferences(step.args, earlier, properties, `${field}.args`);
      earlier.add(step.id);
    });
    if (definition.output !== undefined) checkReferences(definition.output, earlier, properties, "output");
    const dependsOn = [...new Set(definition.steps.map((step) => formatSkillRef(step.skill)))];
    this.checkGraph(name, dependsOn, "composed", "steps");
    return dependsOn;
  }

  /**
   * Pre-flight of a plain skill's `depends_on`: each a visible, live, plain skill other than
   * itself, no cycle. Returns the normalized references.
   */
  preflightPlain(name: string, dependsOn: readonly string[], caller: Caller): string[] {
    const refs = dependsOn.map((text, index) => parseSkillRef(text.trim(), `depends_on[${index}]`));
    const seen = new Set<string>();
    refs.forEach((ref, index) => {
      const field = `depends_on[${index}]`;
      if (ref.name === RESERVED_MODULE)
        throw new InvalidArgumentError(field, `"${RESERVED_MODULE}" cannot be a dependency: its module name is the skill's own file`);
      if (seen.has(ref.name)) throw new InvalidArgumentError(field, `"${ref.name}" is listed twice`);
      seen.add(ref.name);
      const resolved = this.resolve(ref, caller, `${field}`);
      if (resolved.declared.kind === "composed") {
        throw new InvalidArgumentError(field, `"${ref.name}" is a composed skill; a plain skill can only import plain skills`);
      }
    });
    const normalized = refs.map(formatSkillRef);
    if (normalized.length > 0) this.checkGraph(name, normalized, "plain", "depends_on");
    return normalized;
  }

  /** The graph with `name`'s next version declaring `direct`: INVALID_ARGUMENT naming a cycle or a nesting too deep. */
  private checkGraph(name: string, direct: readonly string[], kind: SkillKind, field: string): void {
    const edges = (key: string): readonly string[] => (key === name ? direct : this.edgesOf(key));
    try {
      loadOrder(name, edges);
    } catch (error) {
      if (error instanceof CycleError) throw new InvalidArgumentError(field, `would close a dependency cycle: ${error.cycle.join(" → ")}`);
      throw error;
    }
    if (kind !== "composed") return;
    const depth = nestingDepth(name, edges, (key) => (key === name ? true : this.kindOfKey(key) === "composed"));
    if (depth > this.settings.maxDepth) {
      throw new InvalidArgumentError(
        field,
        `nests composed skills ${depth} deep; the limit is ${this.settings.maxDepth} (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)`,
      );
    }
  }

  /** Direct dependencies of a graph node ("name" or "name@version"); a missing skill has none. */
  private edgesOf(key: string): readonly string[] {
    return this.declaredOfKey(key)?.dependsOn ?? [];
  }

  private kindOfKey(key: string): SkillKind | undefined {
    return this.declaredOfKey(key)?.kind;
  }

  private declaredOfKey(key: string): DeclaredDependencies | undefined {
    const ref = parseSkillRef(key, "dependency");
    const record = this.registry.get(ref.name);
    if (!record) return undefined;
    return this.dependencies.get(ref.name, ref.version ?? record.version);
  }

  /**
   * The code of every skill a plain skill imports, transitively, in load order (docs/composition.md#dependencies):
   * each as `<name>.py`. FAILED_PRECONDITION naming a dependency that is missing, retired or deleted.
   */
  async dependencyFiles(rootName: string, dependsOn: readonly string[]): Promise<DependencyFile[]> {
    if (dependsOn.length === 0) return [];
    // A key no reference can spell, so the root's own declaration is what the walk starts from.
    const rootKey = `${rootName}@`;
    let order: string[];
    try {
      order = loadOrder(rootKey, (key) => (key === rootKey ? dependsOn : this.edgesOf(key)));
    } catch (error) {
      if (error instanceof CycleError)
        throw new FailedPreconditionError(`cannot run "${rootName}": dependency cycle ${error.cycle.join(" → ")}`);
      throw error;
    }
    const placed = new Map<string, number>();
    const files: DependencyFile[] = [];
    for (const key of order) {
      if (key === rootKey) continue;
      const dependency = this.resolve(parseSkillRef(key, "dependency"), undefined, `cannot run "${rootName}": its dependency`);
      if (dependency.ref.name === rootName) continue;
      const already = placed.get(dependency.ref.name);
      if (already !== undefined) {
        if (already === dependency.version) continue;
        throw new FailedPreconditionError(
          `cannot run "${rootName}": its dependencies need both v${already} and v${dependency.version} of "${dependency.ref.name}"`,
        );
      }
      placed.set(dependency.ref.name, dependency.version);
      files.push({ name: `${dependency.ref.name}.py`, content: await this.readCode(dependency) });
    }
    return files;
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

  /** Live skills that name `name` unpinned: the ones a new version of it affects. */
  unpinnedDependents(name: string): SkillRecord[] {
    return this.dependents(name).filter((skill) => this.declaredOf(skill).dependsOn.includes(name));
  }

  /** What keeps a skill from running: dependencies (transitively) that are missing, retired or deleted. */
  blockers(record: SkillRecord): string[] {
    const blocked: string[] = [];
    const rootKey = `${record.name}@${record.version}`;
    const seen = new Set<string>([rootKey]);
    const queue = [...this.declaredOf(record).dependsOn];
    while (queue.length > 0) {
      const key = queue.shift() as string;
      if (seen.has(key)) continue;
      seen.add(key);
      const ref = parseSkillRef(key, "dependency");
      const dependency = this.registry.get(ref.name);
      if (!dependency) blocked.push(`${key} (missing)`);
      else if (!isLive(dependency.status)) blocked.push(`${key} (${dependency.status})`);
      else if (ref.version !== undefined && !this.registry.version(ref.name, ref.version)) blocked.push(`${key} (no such version)`);
      else queue.push(...this.dependencies.get(ref.name, ref.version ?? dependency.version).dependsOn);
    }
    return blocked;
  }

  /** Failed re-tests against the dependency versions active now (docs/composition.md#re-tests). */
  retestWarnings(record: SkillRecord): string[] {
    return this.dependencies
      .failedRetests(record.name)
      .filter((failed) => this.registry.get(failed.dependency)?.version === failed.dependencyVersion)
      .map(
        (failed) =>
          `the stored test of "${record.name}" failed against "${failed.dependency}" v${failed.dependencyVersion}: ${failed.error}`,
      );
  }

  /** Everything a caller should know before relying on a skill's dependencies. */
  warnings(record: SkillRecord): string[] {
    return [...this.blockers(record).map((b) => `missing dependency ${b}`), ...this.retestWarnings(record)];
  }

  report(record: SkillRecord): DependencyReport {
    const declared = this.declaredOf(record);
    const rootKey = record.name;
    let order: string[];
    try {
      order = loadOrder(rootKey, (key) => (key === rootKey ? declared.dependsOn : this.edgesOf(key)));
    } catch (error) {
      if (!(error instanceof CycleError)) throw error;
      order = [];
    }
    return {
      dependsOn: declared.dependsOn,
      dependents: this.dependents(record.name).map((s) => s.name),
      loadOrder: order,
      warnings: this.warnings(record),
    };
  }

  catalogEntry(record: SkillRecord): CatalogEntry {
    const declared = this.declaredOf(record);
    const base = {
      name: record.name,
      kind: declared.kind,
      version: record.version,
      dependsOn: declared.dependsOn,
      blockedBy: [],
      error: "",
      warnings: [],
    };
    if (!isLive(record.status)) return { ...base, status: "inactive", error: record.statusReason };
    try {
      loadOrder(record.name, (key) => (key === record.name ? declared.dependsOn : this.edgesOf(key)));
    } catch (error) {
      if (error instanceof CycleError) return { ...base, status: "failed", error: error.message };
      throw error;
    }
    const blockedBy = this.blockers(record);
    const warnings = this.retestWarnings(record);
    return { ...base, status: blockedBy.length > 0 ? "blocked" : "ready", blockedBy, warnings };
  }

  /**
   * Records the declarations a registry lacks (one rebuilt from the directory alone, or skills from
   * before composition existed): from `.dependencies.json` first; else a canonical file that is a
   * definition makes a composed skill, anything else a plain skill with no dependencies. Returns
   * how many composed skills and declarations were recovered.
   */
  async backfill(): Promise<number> {
    let recovered = 0;
    let changed = false;
    for (const { name, version, declared } of await this.readDeclarations()) {
      if (this.dependencies.has(name, version) || !this.registry.version(name, version)) continue;
      this.dependencies.record(name, version, declared);
      recovered++;
      changed = true;
    }
    for (const record of this.registry.list({ includeInactive: true })) {
      if (this.dependencies.has(record.name, record.version)) continue;
      let code: string;
      try {
        code = await this.readCode({
          ref: { name: record.name },
          record,
          version: record.version,
          contentHash: record.contentHash,
          declared: PLAIN,
        });
      } catch {
        continue; // reconciliation reports unreadable files
      }
      changed = true;
      if (!isDefinitionText(code)) {
        this.dependencies.record(record.name, record.version, PLAIN);
        continue;
      }
      let dependsOn: string[] = [];
      try {
        dependsOn = [...new Set((parseStoredDefinition(code)?.steps ?? []).map((step) => formatSkillRef(step.skill)))];
      } catch {
        // A definition edited by hand into something unreadable: composed, and it fails when invoked.
      }
      this.dependencies.record(record.name, record.version, { kind: "composed", dependsOn });
      recovered++;
    }
    if (changed) await this.writeDeclarations();
    return recovered;
  }

  /** The canonical store's copy of the declarations; none when the file is missing or unreadable. */
  private async readDeclarations(): Promise<Array<{ name: string; version: number; declared: DeclaredDependencies }>> {
    let document: unknown;
    try {
      document = JSON.parse(await readFile(this.declarationsFile, "utf8"));
    } catch {
      return [];
    }
    if (!isRecord(document) || !isRecord(document.skills)) return [];
    const found: Array<{ name: string; version: number; declared: DeclaredDependencies }> = [];
    for (const [name, versions] of Object.entries(document.skills)) {
      if (!isRecord(versions)) continue;
      for (const [versionText, entry] of Object.entries(versions)) {
        const version = Number(versionText);
        if (!Number.isInteger(version) || version < 1 || !isRecord(entry) || !Array.isArray(entry.depends_on)) continue;
        const dependsOn = entry.depends_on.filter((d): d is string => typeof d === "string");
        found.push({ name, version, declared: { kind: entry.kind === "composed" ? "composed" : "plain", dependsOn } });
      }
    }
    return found;
  }

  /**
   * Seed 002's boot check (docs/composition.md#mandatory-skills): every mandatory skill is
   * registered, live and ready. Throws MandatorySkillError naming the first that is not.
   */
  assertMandatory(names: readonly string[]): void {
    for (const name of names) {
      const record = this.registry.get(name);
      if (!record) throw new MandatorySkillError(name, "is not registered");
      const entry = this.catalogEntry(record);
      if (entry.status === "inactive")
        throw new MandatorySkillError(name, `is ${record.status}${record.statusReason ? ` (${record.statusReason})` : ""}`);
      if (entry.status === "blocked")
        throw new MandatorySkillError(name, `is blocked by missing dependencies: ${entry.blockedBy.join(", ")}`);
      if (entry.status === "failed") throw new MandatorySkillError(name, `failed its dependency pre-flight: ${entry.error}`);
    }
  }

  /**
   * Composed skills of `owner` to retire so that one more fits (docs/composition.md#eviction):
   * fewest invocations first, then the oldest last use (never used: its creation), then name.
   * Protected skills and skills other live skills depend on are never evicted (nothing breaks
   * silently); `except` is the name being registered.
   */
  evictionVictims(owner: string, except: string, now: Date): SkillRecord[] {
    const composed = this.registry.list({ owner }).filter((skill) => skill.name !== except && this.isComposed(skill));
    const excess = composed.length - this.settings.composedSkillsPerAgent + 1;
    if (excess <= 0) return [];
    const ranked = composed
      .filter((skill) => !skill.protected && this.dependents(skill.name).length === 0)
      .map((skill) => ({
        skill,
        invocations: this.registry.usage(skill.name, skill.version, now).totalInvocations,
        lastUse: (skill.lastInvokedAt ?? skill.createdAt).getTime(),
      }))
      .sort((a, b) => a.invocations - b.invocations || a.lastUse - b.lastUse || a.skill.name.localeCompare(b.skill.name));
    return ranked.slice(0, excess).map((r) => r.skill);
  }
}

/** Top-level property names a parameters schema declares; undefined when it does not restrict them. */
function declaredProperties(parametersSchema: string): ReadonlySet<string> | undefined {
  let schema: unknown;
  try {
    schema = JSON.parse(parametersSchema);
  } catch {
    return undefined;
  }
  if (!isRecord(schema) || !isRecord(schema.properties)) return undefined;
  return new Set(Object.keys(schema.properties));
}

function checkReferences(
  template: unknown,
  earlier: ReadonlySet<string>,
  properties: ReadonlySet<string> | undefined,
  field: string,
): void {
  try {
    for (const reference of referencesOf(template)) {
      if (reference.root === "steps" && !earlier.has(reference.step)) {
        throw new InvalidArgumentError(field, `{{${reference.text}}} reads step "${reference.step}", which is not an earlier step`);
      }
      const first = reference.path[0];
      if (reference.root === "params" && properties && typeof first === "string" && !properties.has(first)) {
        throw new InvalidArgumentError(field, `{{${reference.text}}} reads params.${first}, which parameters_schema does not declare`);
      }
    }
  } catch (error) {
    if (error instanceof TemplateError) throw new InvalidArgumentError(field, error.message);
    throw error;
  }
}
