/** The registry's records: what the source of truth knows of skills, versions and invocations. */
import type { SourceWindow } from "./outcome-signals.js";
import type { SkillStatus, WindowStats } from "./skill-health.js";

export type { SkillStatus } from "./skill-health.js";

/**
 * Who may see a skill (docs/security.md#grants-and-visibility): its owner (and admins) only, the
 * owner and the agents or users it was granted to, or every agent. `internal` is never chosen: a
 * private skill with at least one grant is internal, and goes back to private with its last grant.
 */
export const SKILL_VISIBILITIES = ["private", "internal", "public"] as const;
export type SkillVisibility = (typeof SKILL_VISIBILITIES)[number];

/** Whose a skill is and who may see it. */
export interface SkillAccess {
  readonly owner: string;
  readonly visibility: SkillVisibility;
}

/** Who a grant is for: one agent, or one end user (any delegating agent acting for that user). */
export type GranteeKind = "agent" | "user";

/** One grant of a skill (docs/security.md#grants-and-visibility). */
export interface SkillGrant {
  readonly name: string;
  readonly granteeKind: GranteeKind;
  readonly grantee: string;
  /** The version the grantee is pinned to; undefined: it follows the active version. */
  readonly version: number | undefined;
  readonly grantedBy: string;
  readonly grantedAt: Date;
}

/** What the sharing rules keep beside owner and visibility: the system flag, the on/off switch and the grants. */
export interface SkillSharing {
  /** Visible to every agent; changed only by admins (docs/security.md#system-skills). */
  readonly system: boolean;
  /** A disabled skill keeps everything but is neither routed nor invocable. */
  readonly enabled: boolean;
  /** Who switched it off (empty while enabled). */
  readonly disabledBy: string;
  readonly grants: readonly SkillGrant[];
}

/** How a version came to be. */
export const VERSION_ORIGINS = ["register", "patch", "migrate", "rebuild"] as const;
export type VersionOrigin = (typeof VERSION_ORIGINS)[number];

/** A registered skill as the registry (the source of truth) knows it. */
/** A skill as start-up reconciliation checks its files: where they belong and what the active one must hash to. */
export interface SkillFileState {
  readonly name: string;
  readonly status: SkillStatus;
  readonly version: number;
  readonly latestVersion: number;
  readonly contentHash: string;
}

export interface SkillRecord {
  readonly name: string;
  readonly description: string;
  /** JSON Schema, as the JSON text the caller sent. */
  readonly parametersSchema: string;
  /** The payload the active version was proven with; patches re-run it. */
  readonly testPayload: string;
  readonly status: SkillStatus;
  /** Why the skill has its status (empty for a healthy active skill). */
  readonly statusReason: string;
  /** Low-reliability note from the rolling window (empty when there is none). */
  readonly healthWarning: string;
  /** The active version. */
  readonly version: number;
  /** The highest version ever committed (≥ version after a rollback). */
  readonly latestVersion: number;
  readonly contentHash: string;
  /** Successful invocations (docs/skill-lifecycle.md#counters). */
  readonly usageCount: number;
  /** Consecutive failed invocations since the last success (docs/skill-lifecycle.md#counters). */
  readonly failureCount: number;
  /** Exempt from automatic deprecation and retirement (docs/skill-lifecycle.md#protection). */
  readonly protected: boolean;
  /** Created by the service itself (migration, pattern promotion) rather than by an agent. */
  readonly autoCreated: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
  readonly statusChangedAt: Date;
  readonly lastInvokedAt: Date | undefined;
  /** The agent that registered it (or was given it). */
  readonly owner: string;
  readonly visibility: SkillVisibility;
  readonly system: boolean;
  readonly enabled: boolean;
  readonly disabledBy: string;
  /** Every grant of the skill, oldest first. */
  readonly grants: readonly SkillGrant[];
  /** The active version's declared packages and the environment they run in (docs/packages.md). */
  readonly requirements: readonly string[];
  readonly systemPackages: readonly string[];
  /** Empty: the active version needs no package (the sandbox image alone). */
  readonly environmentId: string;
  /** The names of the secrets the active version's runs are handed (docs/security.md#declaring-and-delivering); never values. */
  readonly secrets: readonly string[];
  /** The hosts the active version's runs may reach, in canonical form (docs/security.md#declaring-hosts); empty: no network. */
  readonly networkAllow: readonly string[];
}

/** What a version declares it needs beyond the standard library, and the environment built for it (docs/packages.md). */
export interface VersionPackages {
  /** Normalised PEP 508 requirement specifiers, sorted. */
  readonly requirements: readonly string[];
  /** Debian package names, sorted. */
  readonly systemPackages: readonly string[];
  /** The environment's id; empty when both lists are. */
  readonly environmentId: string;
}

/**
 * One of a version's test files as the registry lists it (docs/files.md#test-files): its bytes are
 * in the canonical store, and every read checks them against this size and digest.
 */
export interface TestFileEntry {
  /** Relative to /sandbox/in/ (and to the version's test-files directory in the store). */
  readonly path: string;
  readonly sizeBytes: number;
  /** SHA-256 of the bytes, lowercase hex. */
  readonly sha256: string;
}

/** One immutable version of a skill. */
export interface VersionRecord {
  readonly name: string;
  readonly version: number;
  readonly description: string;
  readonly parametersSchema: string;
  readonly testPayload: string;
  readonly contentHash: string;
  readonly origin: VersionOrigin;
  readonly createdAt: Date;
  /** Absent: none (every version from before packages existed). */
  readonly packages?: VersionPackages;
  /** The files its test runs are handed, in the order they were sent (docs/files.md#test-files). Absent: none. */
  readonly testFiles?: readonly TestFileEntry[];
  /** The names of the invoking agent's secrets its runs are handed (docs/security.md#declaring-and-delivering). Absent: none. */
  readonly secrets?: readonly string[];
  /** The hosts its runs may reach, in canonical form (docs/security.md#declaring-hosts). Absent: none, no network. */
  readonly networkAllow?: readonly string[];
}

/** One invocation's outcome, as recorded for telemetry. */
export interface InvocationOutcome {
  readonly name: string;
  readonly version: number;
  readonly at: Date;
  readonly success: boolean;
  readonly durationMs: number;
  readonly exitCode: number;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
  readonly errorSummary: string;
  readonly caller: string;
  /**
   * The files the run returned (docs/console.md#recent-runs): when recorded, all of them; when read
   * back, the first RECORDED_FILES of them. Absent or empty: none.
   */
  readonly outputFiles?: readonly ReturnedFile[];
  /** Read back only: how many files the run returned and their whole sizes together, the unlisted ones included. */
  readonly outputFileCount?: number;
  readonly outputFileBytes?: number;
  /**
   * A failed run's stderr (docs/console.md#last-error), already redacted: when recorded, what the run
   * returned; when read back, its last RECORDED_STDERR_CHARS characters. Successful runs keep none.
   */
  readonly stderrTail?: string;
}

/** A file a run returned, as its invocation keeps it: the name and size, never the bytes. */
export interface ReturnedFile {
  readonly path: string;
  /** The whole file's size. */
  readonly sizeBytes: number;
  /** Only its first bytes came back (docs/files.md#output-files). */
  readonly truncated: boolean;
}

/** Invocations of one version on one UTC day (docs/console.md#health-timeline). */
export interface DailyOutcome {
  /** Midnight UTC of the day. */
  readonly day: Date;
  readonly version: number;
  readonly invocations: number;
  readonly successes: number;
}

/** Raw figures behind the stats RPC. */
export interface UsageFigures {
  readonly invocationsLast7Days: number;
  readonly totalInvocations: number;
  readonly totalSuccesses: number;
  /** Durations of the most recent invocations of the active version. */
  readonly recentDurationsMs: number[];
  /** With the samples of each source (docs/learning.md#outcomes). */
  readonly window: WindowStats & { readonly bySource: SourceWindow[] };
}

/** A whole skill as restored by a migration or a rebuild. */
export interface ImportedSkill {
  readonly name: string;
  readonly status: SkillStatus;
  readonly statusReason: string;
  readonly activeVersion: number;
  readonly usageCount: number;
  readonly failureCount: number;
  readonly protected: boolean;
  readonly autoCreated: boolean;
  readonly createdAt: Date;
  readonly lastInvokedAt: Date | undefined;
  readonly versions: readonly VersionRecord[];
  readonly access: SkillAccess;
  /** Absent in a mirror from before grants: not system, enabled, no grants. */
  readonly sharing?: SkillSharing;
}

/** Which skills a listing returns. */
export interface ListOptions {
  /** Retired and deleted skills too. */
  readonly includeInactive?: boolean;
  /** Only skills this agent may see (own, public, system, granted to it); omitted: every skill. */
  readonly visibleTo?: string;
  /** With `visibleTo`: the end user the agent acts for, whose grants count too. */
  readonly visibleToUser?: string;
  /** Only skills this agent owns. */
  readonly owner?: string;
  /** Only skills whose name sorts after this one (a page's keyset cursor: docs/api.md#pagination). */
  readonly after?: string;
  /** At most this many skills (SQL LIMIT). */
  readonly limit?: number;
}

/** Every kind a skill can be: declared (plain, composed) or from a folder (directory, instructions). */
export type LibraryKind = "plain" | "composed" | "directory" | "instructions";

/** A page of the console's library (docs/console.md#library): the listing's filters, a status and a kind, both ways. */
export interface LibraryOptions extends Omit<ListOptions, "after"> {
  /** One status only; with `includeInactive` false, one of the live ones. */
  readonly status?: string;
  /** One kind only. */
  readonly kind?: LibraryKind;
  /** Names after this one, ascending (the next page). */
  readonly after?: string;
  /** Names before this one, read descending and returned ascending (the previous page). */
  readonly before?: string;
}
