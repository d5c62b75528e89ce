/**
 * The lifecycle rules of a skill, as pure functions of its counters and recent outcomes.
 *
 * Two rule sets are kept side by side (docs/skill-lifecycle.md has both, with every threshold):
 * - "streak" (#consecutive-failures): consecutive failures mark a skill `degraded`; a success clears it;
 *   `RetireDegradedSkills` retires on `failure_count ≥ 3 OR (failure_count ≥ 5 AND usage_count < 10)`.
 * - "window" (#rolling-window): the success rate over the last N invocations of the active version;
 *   below `warnBelow` the skill carries a warning, below `deprecateBelow` it is `deprecated`
 *   (kept, invocable by name, not routed). A `protected` pin exempts it from deprecation and retirement.
 */

/** Every status a skill can have. */
export const SKILL_STATUSES = ["active", "degraded", "deprecated", "retired", "deleted"] as const;
export type SkillStatus = (typeof SKILL_STATUSES)[number];

/** Statuses whose code lives in the active directory and that can be invoked. */
export const LIVE_STATUSES: readonly SkillStatus[] = ["active", "degraded", "deprecated"];

export function isLive(status: SkillStatus): boolean {
  return LIVE_STATUSES.includes(status);
}

/** Thresholds of both rule sets; all configurable. */
export interface HealthPolicy {
  /** Streak: consecutive failures that mark a skill degraded. @default 3 */
  readonly degradeAfterConsecutiveFailures: number;
  /** Window: invocations in the rolling window. @default 20 */
  readonly windowSize: number;
  /** Window: invocations needed in the window before its rate is judged. @default 20 (the full window) */
  readonly minWindowSamples: number;
  /** Window: success rate below which a skill carries a warning. @default 0.4 */
  readonly warnBelow: number;
  /** Window: success rate below which a skill is deprecated. @default 0.3 */
  readonly deprecateBelow: number;
  /** Retirement rule, first clause: failure_count ≥ this. @default 3 */
  readonly retireAtFailures: number;
  /** Retirement rule, second clause: failure_count ≥ this … @default 5 */
  readonly retireAtFailuresWithLowUsage: number;
  /** … AND usage_count < this. @default 10 */
  readonly lowUsageBelow: number;
  /**
   * Whose reports count (docs/learning.md#whose-reports-count): distinct agents other than the owner
   * (and admins) whose same verdict must be among the window's samples before those agents' verdicts
   * count toward the shared window. @default 3
   */
  readonly reportQuorum: number;
  /**
   * An agent's own reports on the active version needed before their rate can take the skill out of
   * that agent's own routes (docs/learning.md#your-own-routes). @default 3
   */
  readonly ownRouteMinReports: number;
}

export const DEFAULT_HEALTH_POLICY: HealthPolicy = {
  degradeAfterConsecutiveFailures: 3,
  windowSize: 20,
  minWindowSamples: 20,
  warnBelow: 0.4,
  deprecateBelow: 0.3,
  retireAtFailures: 3,
  retireAtFailuresWithLowUsage: 5,
  lowUsageBelow: 10,
  reportQuorum: 3,
  ownRouteMinReports: 3,
};

/** Outcomes of the most recent invocations of the active version. */
export interface WindowStats {
  readonly samples: number;
  /** Weighted successes (docs/learning.md#outcomes); a count when every sample weighs 1. */
  readonly successes: number;
  /** Sum of the samples' weights; absent: every sample weighs 1. */
  readonly weight?: number;
}

/** The rate over the window, or undefined while it has too few samples to judge. */
export function windowRate(window: WindowStats, policy: HealthPolicy): number | undefined {
  if (window.samples === 0 || window.samples < policy.minWindowSamples) return undefined;
  return window.successes / (window.weight ?? window.samples);
}

export interface HealthInput {
  readonly status: SkillStatus;
  readonly protected: boolean;
  /** Consecutive failures since the last success (`failure_count`). */
  readonly failureCount: number;
  readonly window: WindowStats;
}

export interface HealthVerdict {
  readonly status: SkillStatus;
  /** Why the skill has this status; empty for a healthy active skill. */
  readonly reason: string;
  /** Low-reliability note for callers and routing; empty when there is none. */
  readonly warning: string;
}

/**
 * The status a live skill should have now. Deprecation outranks degradation (it is the stronger
 * signal); both are re-judged after every invocation, so a skill that recovers becomes active
 * again. Retired and deleted skills only change through their RPCs.
 */
export function evaluateHealth(input: HealthInput, policy: HealthPolicy): HealthVerdict {
  const rate = windowRate(input.window, policy);
  const percent = rate === undefined ? "" : `${Math.round(rate * 100)}%`;
  const over = `over the last ${input.window.samples} invocations`;
  const warning =
    rate !== undefined && rate < policy.warnBelow
      ? `low reliability: success rate ${percent} ${over} is below ${Math.round(policy.warnBelow * 100)}%`
      : "";
  if (!isLive(input.status)) return { status: input.status, reason: "", warning };
  if (rate !== undefined && rate < policy.deprecateBelow && !input.protected) {
    return {
      status: "deprecated",
      reason: `success rate ${percent} ${over} is below ${Math.round(policy.deprecateBelow * 100)}%`,
      warning,
    };
  }
  if (input.failureCount >= policy.degradeAfterConsecutiveFailures) {
    return { status: "degraded", reason: `${input.failureCount} consecutive failed invocations`, warning };
  }
  return { status: "active", reason: "", warning };
}

export interface RetirementInput {
  readonly status: SkillStatus;
  readonly protected: boolean;
  /** A system skill leaves only by an admin's RetireSkill or DeleteSkill (docs/security.md#system-skills). */
  readonly system?: boolean;
  readonly failureCount: number;
  readonly usageCount: number;
}

/**
 * The retirement rule (docs/skill-lifecycle.md#retirement-rule), clause by clause, so the caller can say why. Empty when the skill
 * stays. Protected, system, retired and deleted skills are never retired.
 */
export function retirementReasons(input: RetirementInput, policy: HealthPolicy): string[] {
  if (input.protected || input.system === true || !isLive(input.status)) return [];
  const reasons: string[] = [];
  if (input.failureCount >= policy.retireAtFailures) {
    reasons.push(`failure_count ${input.failureCount} ≥ ${policy.retireAtFailures}`);
  }
  if (input.failureCount >= policy.retireAtFailuresWithLowUsage && input.usageCount < policy.lowUsageBelow) {
    reasons.push(
      `failure_count ${input.failureCount} ≥ ${policy.retireAtFailuresWithLowUsage} and usage_count ${input.usageCount} < ${policy.lowUsageBelow}`,
    );
  }
  return reasons;
}

/** p-quantile (0..1) of a list of numbers by nearest rank; undefined for an empty list. */
export function quantile(values: readonly number[], q: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank];
}
