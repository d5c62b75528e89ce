import { InvalidArgumentError } from "../../errors/index.js";
import { canSee } from "../access/index.js";
import type { CallContext } from "../call-context.js";
import {
  type DailyOutcome,
  type HealthPolicy,
  type InvocationOutcome,
  type LibraryKind,
  LIVE_STATUSES,
  quantile,
  type SkillRecord,
  type VersionRecord,
} from "../registry/index.js";
import type { SkillCore } from "./skill-core.js";

const DAY_MS = 24 * 60 * 60 * 1000;
/** Invocations per version behind the timeline's duration percentiles. */
const TIMELINE_DURATIONS = 100;

export type { LibraryKind };

/** One page of the console's library (docs/console.md#library). */
export interface LibraryPageInput {
  /** "live" (active, degraded, deprecated), "all", or one status. */
  readonly status: string;
  /** One owner's skills only. */
  readonly owner?: string | undefined;
  readonly kind?: LibraryKind | undefined;
  /** The page after this name (the next page), or … */
  readonly after?: string | undefined;
  /** … the page before this name (the previous page); neither: the first page. */
  readonly before?: string | undefined;
  readonly size: number;
}

/** A library page's rows, by name, and whether more rows lie beyond it in the direction it was read. */
export interface LibraryPage {
  readonly rows: ReadonlyArray<{ readonly skill: SkillRecord; readonly kind: LibraryKind }>;
  readonly more: boolean;
}

/** A skill's health over time (docs/console.md#health-timeline). */
export interface HealthTimeline {
  readonly skill: SkillRecord;
  /** Midnight UTC of the first day covered. */
  readonly since: Date;
  readonly days: DailyOutcome[];
  readonly versions: VersionRecord[];
  readonly durations: ReadonlyArray<{ version: number; samples: number; p50Ms: number; p95Ms: number; p99Ms: number }>;
}

/** A skill's recent runs as the console lists them (docs/console.md#recent-runs). */
export interface RecentRuns {
  /** Newest first, each with its invocation id and the files it returned. */
  readonly runs: ReadonlyArray<InvocationOutcome & { readonly id: number }>;
  /** Every caller's runs (the owner or an admin looking), or only the viewer's own. */
  readonly everyone: boolean;
}

/** What the operator console reads beyond the RPCs' answers (docs/console.md), within what the caller may see. */
export class ConsoleReads {
  constructor(private readonly core: SkillCore) {}

  /** The lifecycle thresholds in force, for views that explain them. */
  get healthPolicy(): HealthPolicy {
    return this.core.policy;
  }

  /**
   * One page of the library (docs/console.md#library): the skills the caller may see, filtered by
   * status, owner and kind, by name from a cursor, each with its kind: one query with joins, whose cost
   * follows the page, not the library. One extra row says whether more follow.
   */
  libraryPage(input: LibraryPageInput, context: CallContext): LibraryPage {
    const { status } = input;
    const rows = this.core.registry.library({
      ...this.core.listScope(context),
      includeInactive: status !== "live" && !(LIVE_STATUSES as readonly string[]).includes(status),
      ...(status === "live" || status === "all" ? {} : { status }),
      ...(input.owner === undefined ? {} : { owner: input.owner }),
      ...(input.kind === undefined ? {} : { kind: input.kind }),
      ...(input.before === undefined ? (input.after === undefined ? {} : { after: input.after }) : { before: input.before }),
      limit: input.size + 1,
    });
    if (rows.length <= input.size) return { rows, more: false };
    // Read backwards (before), the extra row is the first; forwards, the last.
    return { rows: input.before === undefined ? rows.slice(0, input.size) : rows.slice(1), more: true };
  }

  /**
   * The rolling window (docs/skill-lifecycle.md#rolling-window) of each skill the caller may see,
   * oldest outcome first; skills it may not see are left out.
   */
  recentOutcomes(input: { readonly skills: readonly SkillRecord[] }, context: CallContext): Map<string, boolean[]> {
    const visible = input.skills.filter((skill) => canSee(skill, context.caller));
    return this.core.registry.recentOutcomes(
      visible.map((skill) => ({ name: skill.name, version: skill.version })),
      this.core.policy.windowSize,
    );
  }

  /**
   * A skill's health over time (docs/console.md#health-timeline): invocations and successes per
   * UTC day and version over the last `days` days, its versions (when each was committed), and
   * duration percentiles per version over each version's last 100 invocations.
   */
  healthTimeline(input: { readonly name: string; readonly days: number }, context: CallContext): HealthTimeline {
    const { core } = this;
    const { name, days } = input;
    if (!Number.isInteger(days) || days < 1 || days > 366)
      throw new InvalidArgumentError("days", "must be a whole number of days in [1, 366]");
    const skill = core.lookup.visible(name, context.caller);
    const now = core.now();
    const since = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - (days - 1) * DAY_MS);
    const durations = [...core.registry.durationsByVersion(name, TIMELINE_DURATIONS)].map(([version, values]) => ({
      version,
      samples: values.length,
      p50Ms: quantile(values, 0.5) ?? 0,
      p95Ms: quantile(values, 0.95) ?? 0,
      p99Ms: quantile(values, 0.99) ?? 0,
    }));
    return { skill, since, days: core.registry.dailyOutcomes(name, since), versions: core.registry.versions(name), durations };
  }

  /**
   * A skill's last `limit` runs, newest first (docs/console.md#recent-runs): every caller's for its
   * owner and admins (ListGrants' rule), the caller's own for anybody else who may see it. Who ran a
   * shared skill, and what their files are called, is theirs and the owner's to read.
   */
  recentRuns(input: { readonly name: string; readonly limit: number }, context: CallContext): RecentRuns {
    const { name, limit } = input;
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new InvalidArgumentError("limit", "must be a whole number in [1, 500]");
    const skill = this.core.lookup.visible(name, context.caller);
    const everyone = context.caller.admin || skill.owner === context.caller.agentId;
    return { runs: this.core.registry.invocations(name, limit, everyone ? undefined : context.caller.agentId), everyone };
  }

  /**
   * The newest failed run of a skill the caller may see, with its one-line cause and the end of its
   * stderr (docs/console.md#last-error), by recentRuns' rule: any caller's for the owner and admins,
   * the caller's own for anybody else. Undefined when there is none.
   */
  lastFailure(input: { readonly name: string }, context: CallContext): (InvocationOutcome & { readonly id: number }) | undefined {
    const skill = this.core.lookup.visible(input.name, context.caller);
    const everyone = context.caller.admin || skill.owner === context.caller.agentId;
    return this.core.registry.lastFailure(input.name, everyone ? undefined : context.caller.agentId);
  }

  /** How many routed queries are stored as evidence for a skill the caller may see (docs/routing.md#learning-from-use). */
  routingEvidence(input: { readonly name: string }, context: CallContext): number {
    this.core.lookup.visible(input.name, context.caller);
    return this.core.indexer?.evidenceCount(input.name) ?? 0;
  }
}
