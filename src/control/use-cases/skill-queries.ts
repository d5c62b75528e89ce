import { InvalidArgumentError, SkillVersionNotFoundError } from "../../errors/index.js";
import type { RunInputFile } from "../../execution/index.js";
import { agentIdProblem } from "../../identity/index.js";
import { canSee, pinnedVersionFor } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import type { CatalogEntry, DependencyReport, SkillKind } from "../composition/index.js";
import {
  type LastOutcome,
  type ListOptions,
  quantile,
  type SkillRecord,
  type SourceWindow,
  type VersionPackages,
  type VersionRecord,
  windowRate,
} from "../registry/index.js";
import { locationOf } from "../store/index.js";
import { type Listing, openPage, type Page, type PageRequest } from "../../paging/index.js";
import type { FolderHeader } from "./control-dependencies.js";
import type { SkillCore } from "./skill-core.js";

const DAY_MS = 24 * 60 * 60 * 1000;

export interface SkillWithCode {
  readonly skill: SkillRecord;
  /** Python source, or a composed skill's definition (JSON). */
  readonly code: string;
  readonly kind: SkillKind;
  readonly dependsOn: readonly string[];
  /** Set for a skill kept as a folder (docs/skill-sources.md). */
  readonly folder?: FolderHeader | undefined;
  /** The packages of the version whose code this is (docs/packages.md); undefined: none. */
  readonly packages?: VersionPackages | undefined;
  /** The secret names the version whose code this is declares (docs/security.md#declaring-and-delivering); never values. */
  readonly secrets: readonly string[];
  /** The hosts the version whose code this is declares (docs/security.md#declaring-hosts). */
  readonly networkAllow: readonly string[];
}

/** The scorer features of docs/skill-lifecycle.md#stats plus duration percentiles. */
export interface SkillStats {
  readonly skill: SkillRecord;
  readonly ageDays: number;
  readonly successRate: number | undefined;
  readonly invocationVelocity7d: number;
  readonly p50DurationMs: number;
  readonly p95DurationMs: number;
  readonly windowSamples: number;
  readonly windowSuccesses: number;
  readonly totalInvocations: number;
  readonly totalSuccesses: number;
  /** The quality counters (docs/skill-sources.md#quality-counters), where routing keeps them. */
  readonly quality?: { selections: number; applied: number; completions: number; fallbacks: number } | undefined;
  /** The window's samples by source (docs/learning.md#outcomes). */
  readonly bySource?: readonly SourceWindow[];
  /** The last judged outcome (docs/skill-lifecycle.md#stats); undefined before any. */
  readonly lastOutcome?: LastOutcome | undefined;
}

/** ListSkills' input. */
export interface ListInput {
  /** Retired and deleted skills too. @default false */
  readonly includeInactive?: boolean;
  /** Only this agent's skills. */
  readonly owner?: string;
}

/** ListSkills' pages: by name (docs/api.md#pagination). */
const LIST_SKILLS: Listing = { name: "ListSkills", keyShapes: ["s"] };
/** ListSkillVersions' pages: by version number. */
const LIST_VERSIONS: Listing = { name: "ListSkillVersions", keyShapes: ["n"] };

/** What the caller may read of the skills it may see: GetSkill, ListSkills, versions, stats, dependencies, the catalog. */
export class SkillQueries {
  constructor(private readonly core: SkillCore) {}

  async get(input: { readonly name: string }, context: CallContext): Promise<SkillWithCode> {
    const { core } = this;
    const { name } = input;
    const skill = core.lookup.visible(name, context.caller);
    const folder = core.folders?.header(skill);
    // A grantee pinned to a version reads the code it runs (docs/security.md#pinned-grants).
    const pinned = pinnedVersionFor(skill, context.caller);
    const version = pinned === undefined || pinned === skill.version ? undefined : core.registry.version(name, pinned);
    if (version) {
      const declared = core.composition.dependencies.get(name, version.version);
      const code = await core.composition.readCode({
        ref: { name, version: version.version },
        record: skill,
        version: version.version,
        contentHash: version.contentHash,
        declared,
      });
      return {
        skill,
        code,
        kind: declared.kind,
        dependsOn: declared.dependsOn,
        folder,
        packages: version.packages,
        secrets: version.secrets ?? [],
        networkAllow: version.networkAllow ?? [],
      };
    }
    const declared = core.composition.declaredOf(skill);
    const packages = core.packagesOf(skill, skill.version);
    return {
      skill,
      code: await core.activeCode(skill),
      kind: declared.kind,
      dependsOn: declared.dependsOn,
      folder,
      packages,
      secrets: skill.secrets,
      networkAllow: skill.networkAllow,
    };
  }

  /**
   * The test files of the version GetSkill answers with (the active one, or a pinned grantee's):
   * what its stored test is handed under /sandbox/in/ (docs/files.md#test-files). Read on their own
   * so that the other readers of a skill do not read them.
   */
  async testFiles(input: { readonly name: string }, context: CallContext): Promise<RunInputFile[]> {
    const { core } = this;
    const skill = core.lookup.visible(input.name, context.caller);
    const version = pinnedVersionFor(skill, context.caller) ?? skill.version;
    return core.testFiles(skill.name, version, locationOf(skill.status));
  }

  /** Every skill the caller may see, optionally only one owner's: for the use cases that need them all. */
  list(input: ListInput, context: CallContext): SkillRecord[] {
    return this.core.registry.list(this.listOptions(input, context));
  }

  /**
   * ListSkills: one page of {@link list}, by name, read as a keyset page in SQL (docs/api.md#pagination),
   * so its cost follows the page size, not the library. A skill added or removed between two pages
   * moves no other skill across the page boundary.
   */
  listPage(input: ListInput & PageRequest, context: CallContext): Page<SkillRecord> {
    const window = openPage<[string]>(LIST_SKILLS, { includeInactive: input.includeInactive ?? false, owner: input.owner ?? "" }, input);
    const rows = this.core.registry.list({ ...this.listOptions(input, context), after: window.after?.[0], limit: window.fetch });
    return window.page(rows, (skill) => [skill.name]);
  }

  versions(input: { readonly name: string }, context: CallContext): { skill: SkillRecord; versions: VersionRecord[] } {
    const skill = this.core.lookup.visible(input.name, context.caller);
    return { skill, versions: this.core.registry.versions(input.name) };
  }

  /** ListSkillVersions: one page of a skill's versions, oldest first (docs/api.md#pagination). */
  versionsPage(
    input: { readonly name: string } & PageRequest,
    context: CallContext,
  ): { skill: SkillRecord; versions: Page<VersionRecord> } {
    const window = openPage<[number]>(LIST_VERSIONS, { name: input.name }, input);
    const skill = this.core.lookup.visible(input.name, context.caller);
    const rows = this.core.registry.versions(input.name, { after: window.after?.[0] ?? 0, limit: window.fetch });
    return { skill, versions: window.page(rows, (version) => [version.version]) };
  }

  /** The registry's options for a listing of what the caller may see; INVALID_ARGUMENT for a malformed owner. */
  private listOptions(input: ListInput, context: CallContext): ListOptions {
    if (input.owner !== undefined) {
      const ownerProblem = agentIdProblem(input.owner);
      if (ownerProblem) throw new InvalidArgumentError("owner", ownerProblem);
    }
    return {
      ...this.core.listScope(context),
      includeInactive: input.includeInactive ?? false,
      ...(input.owner === undefined ? {} : { owner: input.owner }),
    };
  }

  /** The code of one version of a skill the caller may see (its history file, checked against the registry). */
  async versionCode(input: { readonly name: string; readonly version: number }, context: CallContext): Promise<string> {
    const { name, version } = input;
    if (!Number.isInteger(version) || version < 1) throw new InvalidArgumentError("version", "must be a version number ≥ 1");
    const skill = this.core.lookup.visible(name, context.caller);
    const record = this.core.registry.version(name, version);
    if (!record) throw new SkillVersionNotFoundError(name, version, skill.latestVersion);
    return this.core.historyCode(name, version, record.contentHash);
  }

  stats(input: { readonly name: string }, context: CallContext): SkillStats {
    const { core } = this;
    const { name } = input;
    const skill = core.lookup.visible(name, context.caller);
    const now = core.now();
    const usage = core.registry.usage(name, skill.version, now);
    return {
      skill,
      ageDays: (now.getTime() - skill.createdAt.getTime()) / DAY_MS,
      successRate: windowRate(usage.window, core.policy),
      invocationVelocity7d: usage.invocationsLast7Days / 7,
      p50DurationMs: quantile(usage.recentDurationsMs, 0.5) ?? 0,
      p95DurationMs: quantile(usage.recentDurationsMs, 0.95) ?? 0,
      windowSamples: usage.window.samples,
      windowSuccesses: usage.window.successes,
      totalInvocations: usage.totalInvocations,
      totalSuccesses: usage.totalSuccesses,
      quality: core.indexer?.quality?.(name),
      bySource: usage.window.bySource,
      lastOutcome: core.registry.lastOutcome(name),
    };
  }

  /** GetSkillDependencies: what it needs, what needs it, the load order, what blocks it. */
  dependencies(input: { readonly name: string }, context: CallContext): DependencyReport {
    const { core } = this;
    const report = core.composition.report(core.lookup.visible(input.name, context.caller));
    // Dependents the caller may not see stay unnamed, as everywhere else.
    const dependents = report.dependents.filter((d) => {
      const record = core.registry.get(d);
      return record !== undefined && canSee(record, context.caller);
    });
    return { ...report, dependents };
  }

  /** GetCatalog: every skill the caller may see, with its dependency status. */
  catalog(context: CallContext): CatalogEntry[] {
    return this.list({ includeInactive: true }, context).map((skill) => this.core.composition.catalogEntry(skill));
  }

  /**
   * A keyset page of {@link catalog}: at most `limit` entries of skills named after `after`, by name.
   * GetCatalog's pages (with the folders after the skills) are the skill sources' (src/sources).
   */
  catalogAfter(input: { readonly after?: string | undefined; readonly limit: number }, context: CallContext): CatalogEntry[] {
    return this.core.registry
      .list({ ...this.listOptions({ includeInactive: true }, context), after: input.after, limit: input.limit })
      .map((skill) => this.core.composition.catalogEntry(skill));
  }
}
