import { InvalidArgumentError } from "../errors/index.js";
import type {
  CatalogEntry as DomainCatalogEntry,
  IntakeWarning,
  OnFailure as DomainOnFailure,
  StepOutcome,
  RegistrationResult,
  RoutingGateReport as DomainRoutingGateReport,
  SkillGrant as DomainGrant,
  SimilarSkillReport,
  SkillRecord,
  SkillStats,
  SkillStatus as DomainStatus,
  SkillVisibility as DomainVisibility,
  VersionRecord,
} from "../control/index.js";
import { pinnedVersionFor } from "../control/index.js";
import type { ExecutionResult as DomainExecutionResult, RunOutputFile } from "../execution/index.js";
import type { SourcedCatalogEntry } from "../sources/index.js";
import type { SkillGrant } from "../gen/skillengine/v1/sharing.js";
import type { Caller } from "../identity/index.js";
import { structuredJson, structuredObject } from "./json-fields.js";
import type { Hardening as DomainHardening, RoutedSkill as DomainRoutedSkill } from "../routing/index.js";
import { CatalogStatus, type CatalogEntry, OnFailure } from "../gen/skillengine/v1/composition.js";
import { type ExecutionResult, type OutputFile, type StepResult } from "../gen/skillengine/v1/execution.js";
import { OnDuplicate, type SimilarSkill } from "../gen/skillengine/v1/learning.js";
import { type GuardFinding, type RegisterSkillResponse } from "../gen/skillengine/v1/registration.js";
import { Hardening, type RoutedSkill, type RoutingGateReport } from "../gen/skillengine/v1/routing.js";
import { type GetSkillStatsResponse, type Skill, SkillStatus, type SkillVersion, Visibility } from "../gen/skillengine/v1/skills.js";

/** Domain → wire mapping; the gRPC layer holds no other logic. */
const STATUS_TO_WIRE: Readonly<Record<DomainStatus, SkillStatus>> = {
  active: SkillStatus.SKILL_STATUS_ACTIVE,
  degraded: SkillStatus.SKILL_STATUS_DEGRADED,
  deprecated: SkillStatus.SKILL_STATUS_DEPRECATED,
  retired: SkillStatus.SKILL_STATUS_RETIRED,
  deleted: SkillStatus.SKILL_STATUS_DELETED,
};

const VISIBILITY_TO_WIRE: Readonly<Record<DomainVisibility, Visibility>> = {
  private: Visibility.VISIBILITY_PRIVATE,
  internal: Visibility.VISIBILITY_INTERNAL,
  public: Visibility.VISIBILITY_PUBLIC,
};

/** A requested visibility; undefined for VISIBILITY_UNSPECIFIED (and unknown numbers, which the caller rejects). */
export function fromVisibilityMessage(visibility: Visibility): Exclude<DomainVisibility, "internal"> | undefined {
  if (visibility === Visibility.VISIBILITY_PRIVATE) return "private";
  if (visibility === Visibility.VISIBILITY_PUBLIC) return "public";
  return undefined;
}

export function toSkillMessage(record: SkillRecord): Skill {
  return {
    name: record.name,
    description: record.description,
    parametersSchema: record.parametersSchema,
    status: STATUS_TO_WIRE[record.status],
    version: record.version,
    contentHash: record.contentHash,
    usageCount: record.usageCount,
    failureCount: record.failureCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastInvokedAt: record.lastInvokedAt,
    statusReason: record.statusReason,
    warning: record.healthWarning,
    protected: record.protected,
    autoCreated: record.autoCreated,
    latestVersion: record.latestVersion,
    statusChangedAt: record.statusChangedAt,
    owner: record.owner,
    visibility: VISIBILITY_TO_WIRE[record.visibility],
    system: record.system,
    disabled: !record.enabled,
    disabledBy: record.disabledBy,
    pinnedVersion: 0,
    grantCount: record.grants.length,
    requirements: [...record.requirements],
    systemPackages: [...record.systemPackages],
    environmentId: record.environmentId,
    secrets: [...record.secrets],
    networkAllow: [...record.networkAllow],
    parametersSchemaJson: structuredObject(record.parametersSchema),
  };
}

/** Skill messages as `caller` sees them: with the version a grant pins it to (docs/security.md#pinned-grants). */
export function toSkillMessageFor(caller: Caller): (record: SkillRecord) => Skill {
  return (record) => ({ ...toSkillMessage(record), pinnedVersion: pinnedVersionFor(record, caller) ?? 0 });
}

export function toGrantMessage(grant: DomainGrant): SkillGrant {
  return {
    name: grant.name,
    granteeAgent: grant.granteeKind === "agent" ? grant.grantee : "",
    granteeUser: grant.granteeKind === "user" ? grant.grantee : "",
    version: grant.version ?? 0,
    grantedBy: grant.grantedBy,
    grantedAt: grant.grantedAt,
  };
}

export function toVersionMessage(version: VersionRecord, activeVersion: number): SkillVersion {
  return {
    version: version.version,
    contentHash: version.contentHash,
    description: version.description,
    parametersSchema: version.parametersSchema,
    testPayload: version.testPayload,
    origin: version.origin,
    createdAt: version.createdAt,
    active: version.version === activeVersion,
  };
}

export function toWarningMessage(warning: IntakeWarning): GuardFinding {
  return { ...warning };
}

/** RegisterSkill's and PatchSkill's answer: both are a change of code through the same gate. */
export function toGatedChangeMessage(result: RegistrationResult): RegisterSkillResponse {
  return {
    skill: toSkillMessage(result.skill),
    // An identical registration ran nothing: no test (docs/skill-lifecycle.md#identical-registrations).
    test: result.test ? toExecutionResultMessage(result.test) : undefined,
    unchanged: result.unchanged === true,
    normalizations: result.normalizations,
    warnings: result.warnings.map(toWarningMessage),
    dependentsRetested: (result.dependentsRetested ?? []).map((r) => ({ name: r.name, passed: r.passed, error: r.error })),
    hiddenDependentsPassed: result.hiddenDependentsRetested?.passed ?? 0,
    hiddenDependentsFailed: result.hiddenDependentsRetested?.failed ?? 0,
    similarSkills: (result.similarSkills ?? []).map(toSimilarSkillMessage),
    testFiles: (result.test?.outputFiles ?? []).map(toOutputFileMessage),
    // The egress gateway's refusals during the test run follow the file warnings (docs/security.md#egress).
    testFileWarnings: [...(result.test?.fileWarnings ?? []), ...(result.test?.networkWarnings ?? [])],
    routingGate: result.routingGate ? toRoutingGateMessage(result.routingGate) : undefined,
  };
}

/** RegisterSkill's routing gate (docs/routing.md#the-routing-gate). */
export function toRoutingGateMessage(report: DomainRoutingGateReport): RoutingGateReport {
  return {
    examples: report.examples.map((e) => ({
      query: e.query,
      rank: e.rank,
      relevance: e.relevance ?? 0,
      hasRelevance: e.relevance !== undefined,
      outrankedBy: [...e.outrankedBy],
      found: e.found,
    })),
    shadowed: report.shadowed.map((s) => ({ skill: s.skill, query: s.query ?? "", rank: s.rank, skillRank: s.skillRank })),
    warnings: [...report.warnings],
    degraded: [...report.degraded],
  };
}

/** RouteSkills' hardening: unspecified is short (docs/routing.md#hardened-descriptions). */
export function fromHardeningMessage(hardening: Hardening | undefined): DomainHardening {
  switch (hardening) {
    case undefined:
    case Hardening.HARDENING_UNSPECIFIED:
    case Hardening.HARDENING_SHORT:
      return "short";
    case Hardening.HARDENING_FULL:
      return "full";
    case Hardening.HARDENING_NONE:
      return "none";
    case Hardening.UNRECOGNIZED:
    default:
      throw new InvalidArgumentError("hardening", "must be HARDENING_SHORT, HARDENING_FULL or HARDENING_NONE");
  }
}

/** A file a run left under /sandbox/out/ (docs/files.md#output-files). */
export function toOutputFileMessage(file: RunOutputFile): OutputFile {
  return { ...file };
}

export function toSimilarSkillMessage(similar: SimilarSkillReport): SimilarSkill {
  return { ...similar };
}

/** RegisterSkill's on_duplicate: unspecified is warn. */
export function fromOnDuplicateMessage(onDuplicate: OnDuplicate): "warn" | "reject" {
  if (onDuplicate === OnDuplicate.ON_DUPLICATE_REJECT) return "reject";
  if (onDuplicate === OnDuplicate.ON_DUPLICATE_WARN || onDuplicate === OnDuplicate.ON_DUPLICATE_UNSPECIFIED) return "warn";
  throw new InvalidArgumentError("on_duplicate", "must be ON_DUPLICATE_WARN or ON_DUPLICATE_REJECT");
}

export function toStepResultMessage(step: StepOutcome): StepResult {
  return {
    id: step.id,
    skill: step.skill,
    version: step.version,
    skipped: step.skipped,
    result: step.result ? toExecutionResultMessage(step.result) : undefined,
    error: step.error,
    files: (step.result?.outputFiles ?? []).map(toOutputFileMessage),
  };
}

export function fromOnFailureMessage(onFailure: OnFailure): DomainOnFailure | undefined {
  if (onFailure === OnFailure.ON_FAILURE_UNSPECIFIED || onFailure === OnFailure.ON_FAILURE_STOP) return "stop";
  if (onFailure === OnFailure.ON_FAILURE_CONTINUE) return "continue";
  return undefined;
}

const CATALOG_STATUS_TO_WIRE: Readonly<Record<SourcedCatalogEntry["status"], CatalogStatus>> = {
  ready: CatalogStatus.CATALOG_STATUS_READY,
  blocked: CatalogStatus.CATALOG_STATUS_BLOCKED,
  failed: CatalogStatus.CATALOG_STATUS_FAILED,
  inactive: CatalogStatus.CATALOG_STATUS_INACTIVE,
  discovered: CatalogStatus.CATALOG_STATUS_DISCOVERED,
  shadowed: CatalogStatus.CATALOG_STATUS_SHADOWED,
};

/** A catalog entry: composition's, or one that also says where a skill folder is (docs/skill-sources.md#catalog). */
export function toCatalogEntryMessage(entry: DomainCatalogEntry | SourcedCatalogEntry): CatalogEntry {
  const source: Partial<SourcedCatalogEntry> = entry;
  return {
    name: entry.name,
    kind: entry.kind,
    status: CATALOG_STATUS_TO_WIRE[entry.status],
    version: entry.version,
    dependsOn: [...entry.dependsOn],
    blockedBy: [...entry.blockedBy],
    error: entry.error,
    warnings: [...entry.warnings],
    skillId: source.skillId ?? "",
    sourceDirectory: source.sourceDirectory ?? "",
    sourceFolder: source.sourceFolder ?? "",
    reason: source.reason ?? entry.error,
  };
}

export function toStatsMessage(stats: SkillStats): GetSkillStatsResponse {
  return {
    name: stats.skill.name,
    ageDays: stats.ageDays,
    successRate: stats.successRate ?? 0,
    hasSuccessRate: stats.successRate !== undefined,
    invocationVelocity7d: stats.invocationVelocity7d,
    version: stats.skill.version,
    autoCreated: stats.skill.autoCreated,
    p50DurationMs: stats.p50DurationMs,
    p95DurationMs: stats.p95DurationMs,
    windowSamples: stats.windowSamples,
    windowSuccesses: stats.windowSuccesses,
    totalInvocations: stats.totalInvocations,
    totalSuccesses: stats.totalSuccesses,
    skill: toSkillMessage(stats.skill),
    selections: stats.quality?.selections ?? 0,
    applied: stats.quality?.applied ?? 0,
    completions: stats.quality?.completions ?? 0,
    fallbacks: stats.quality?.fallbacks ?? 0,
    successBySource: (stats.bySource ?? []).map((s) => ({
      source: s.source,
      samples: s.samples,
      successes: s.successes,
      successRate: s.samples === 0 ? 0 : s.successes / s.samples,
      weight: s.weight,
    })),
    lastOutcome: stats.lastOutcome === undefined ? undefined : { ...stats.lastOutcome },
  };
}

export function toExecutionResultMessage(result: DomainExecutionResult): ExecutionResult {
  return {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs,
    timedOut: result.timedOut,
    oomKilled: result.oomKilled,
    stdoutTruncated: result.stdoutTruncated,
    stderrTruncated: result.stderrTruncated,
    errorSummary: result.errorSummary,
    success: result.success,
    // What the skill printed as a structure (docs/api.md#json-as-structures); cut-off output is no document.
    resultJson: result.stdoutTruncated ? undefined : structuredJson(result.stdout),
  };
}

export function toRoutedSkillMessage(routed: DomainRoutedSkill): RoutedSkill {
  return {
    name: routed.skill.name,
    description: routed.description,
    parametersSchema: routed.skill.parametersSchema,
    score: routed.score,
    status: STATUS_TO_WIRE[routed.skill.status],
    successRate: routed.successRate ?? 0,
    hasSuccessRate: routed.successRate !== undefined,
    warnings: routed.warnings,
    toolDefinition: routed.toolDefinition,
    keywordRank: routed.keywordRank,
    vectorRank: routed.vectorRank,
    relevance: routed.relevance ?? 0,
    hasRelevance: routed.relevance !== undefined,
    keywordScore: routed.keywordScore,
    vectorScore: routed.vectorScore,
    kind: routed.kind,
    skillId: routed.skillId,
    selections: routed.quality?.selections ?? 0,
    applied: routed.quality?.applied ?? 0,
    completions: routed.quality?.completions ?? 0,
    fallbacks: routed.quality?.fallbacks ?? 0,
    instructions: routed.instructions ?? "",
    toolDefinitionJson: structuredObject(routed.toolDefinition),
    parametersSchemaJson: structuredObject(routed.skill.parametersSchema),
  };
}
