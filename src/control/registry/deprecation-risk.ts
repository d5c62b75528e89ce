import { evaluateHealth, type HealthPolicy, isLive, retirementReasons, type SkillStatus } from "./skill-health.js";

/** A threshold a skill can cross by failing (docs/console.md#deprecation-risk). */
export type RiskThreshold = "warning" | "degraded" | "deprecated" | "retirement";

/** How many more failed invocations, in a row, take a skill across each threshold it has not crossed yet. */
export interface DeprecationRisk {
  /** The nearest threshold, or undefined when failures cannot take it anywhere (retired, deleted). */
  readonly next: { readonly threshold: RiskThreshold; readonly failures: number } | undefined;
  /** Failures until the window deprecates it; undefined when protected, already deprecated or not live. */
  readonly untilDeprecated: number | undefined;
  /**
   * The active version has no outcome yet and no failure counts against the skill: the distances are
   * the rules' starting point, the same for every untouched skill, and say nothing about this one.
   */
  readonly noRuns: boolean;
}

export interface RiskInput {
  readonly status: SkillStatus;
  readonly protected: boolean;
  readonly failureCount: number;
  readonly usageCount: number;
  readonly healthWarning: string;
  /** The rolling window's outcomes, oldest first. */
  readonly window: readonly boolean[];
}

/**
 * Replays the lifecycle rules (docs/skill-lifecycle.md#how-the-rules-combine) on 1, 2, … more
 * failures: the window slides (the oldest outcome leaves once it is full) and `failure_count`
 * grows. The answer is exact for the rules as configured, not an estimate.
 */
export function deprecationRisk(input: RiskInput, policy: HealthPolicy): DeprecationRisk {
  const noRuns = input.window.length === 0 && input.failureCount === 0;
  if (!isLive(input.status)) return { next: undefined, untilDeprecated: undefined, noRuns };
  const crossed = new Map<RiskThreshold, number>();
  const outcomes = [...input.window];
  // Already eligible for the retirement rule: the next sweep retires it, no failure needed.
  if (retirementReasons(input, policy).length > 0) crossed.set("retirement", 0);
  // After windowSize failures the window holds only failures; every rule has been decided by then.
  const horizon =
    policy.windowSize + Math.max(policy.degradeAfterConsecutiveFailures, policy.retireAtFailures, policy.retireAtFailuresWithLowUsage);
  for (let failures = 1; failures <= horizon; failures++) {
    outcomes.push(false);
    if (outcomes.length > policy.windowSize) outcomes.shift();
    const failureCount = input.failureCount + failures;
    const verdict = evaluateHealth(
      {
        status: input.status,
        protected: input.protected,
        failureCount,
        window: { samples: outcomes.length, successes: outcomes.filter(Boolean).length },
      },
      policy,
    );
    if (verdict.warning !== "" && input.healthWarning === "" && !crossed.has("warning")) crossed.set("warning", failures);
    if (verdict.status === "degraded" && input.status === "active" && !crossed.has("degraded")) crossed.set("degraded", failures);
    if (verdict.status === "deprecated" && input.status !== "deprecated" && !crossed.has("deprecated")) crossed.set("deprecated", failures);
    const retire = retirementReasons(
      { status: input.status, protected: input.protected, failureCount, usageCount: input.usageCount },
      policy,
    );
    if (retire.length > 0 && !crossed.has("retirement")) crossed.set("retirement", failures);
  }
  let next: DeprecationRisk["next"];
  for (const [threshold, failures] of crossed) {
    if (next === undefined || failures < next.failures) next = { threshold, failures };
  }
  return { next, untilDeprecated: crossed.get("deprecated"), noRuns };
}
