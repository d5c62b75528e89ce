/**
 * Whose outcome reports count toward a skill's shared health, and how much
 * (docs/learning.md#whose-reports-count). Pure functions; outcome-signals.ts feeds them rows.
 *
 * - The engine's own verdicts (the exit codes of real runs) and the verdicts of the skill's owner or
 *   an admin (*trusted* reports) count in the rolling window as they always did.
 * - Any other agent's verdict (a RecordSkillOutcome on its own invocation, an implicit signal from
 *   its recorded sessions) is a claim only that agent makes. It counts toward the shared window only
 *   when at least `quorum` distinct such agents gave the same verdict among the window's samples,
 *   and then all of one agent's counted verdicts together weigh at most {@link ONE_VOTE}.
 * - Until then, such a verdict on an invocation leaves the invocation's exit-code verdict in place,
 *   and such a sample of no invocation takes no place in the window (so a flood of them cannot push
 *   the real runs out). The reporter's own routes follow its reports at once ({@link leavesOwnRoutes}).
 */
import type { OutcomeSource } from "./outcome-signals.js";
import type { HealthPolicy, WindowStats } from "./skill-health.js";

/** All of one non-owner agent's counted verdicts together weigh at most one sample's weight: one agent, one vote. */
export const ONE_VOTE = 1;

/** Who reports an outcome: an agent, and whether it has the admin role (the caller's identity). */
export interface OutcomeReporter {
  readonly agentId: string;
  readonly admin: boolean;
}

/** A verdict someone reported: explicit (RecordSkillOutcome) or implicit (a recorded session). */
export interface Report {
  readonly source: Exclude<OutcomeSource, "exit_code">;
  readonly success: boolean;
  /** Its nominal weight (1 explicit, the implicit weight for implicit). */
  readonly weight: number;
  readonly reporter: string;
  /** Reported by the skill's owner or an admin (decided when it was reported). */
  readonly trusted: boolean;
}

/** A possible sample of the window: an invocation (with the engine's verdict and maybe a report on it) or a report of no invocation. */
export interface WindowCandidate {
  /** Newest first by `at`, then `tie`. */
  readonly at: number;
  readonly tie: number;
  /** The exit code's verdict of an invocation; undefined for a sample of no invocation. */
  readonly engine: boolean | undefined;
  /** The verdict reported on it; always set for a sample of no invocation. */
  readonly report: Report | undefined;
}

/** One sample as it counts in the window. */
export interface CountedSample {
  readonly source: OutcomeSource;
  readonly success: boolean;
  readonly weight: number;
}

/**
 * The rolling window of `size` samples from `candidates`, each sample weighed by the rule above.
 * `candidates` must hold, for each kind (invocations; trusted reports of no invocation; untrusted
 * ones of each verdict), at least its `size` newest: enough to fill the window whichever of them count.
 */
export function judgeWindow(candidates: readonly WindowCandidate[], size: number, quorum: number): CountedSample[] {
  const newestFirst = [...candidates].sort((a, b) => b.at - a.at || b.tie - a.tie);
  // The quorum is judged among the samples the window would hold if every report counted.
  const agreed = agreedVerdicts(newestFirst.slice(0, size), quorum);
  const window = newestFirst.filter((c) => c.engine !== undefined || counts(c.report, agreed)).slice(0, size);
  const untrustedWeight = new Map<string, number>();
  for (const c of window) {
    if (c.report && !c.report.trusted && counts(c.report, agreed)) {
      untrustedWeight.set(c.report.reporter, (untrustedWeight.get(c.report.reporter) ?? 0) + c.report.weight);
    }
  }
  return window.map((c): CountedSample => {
    const report = c.report;
    if (report === undefined || !counts(report, agreed)) return { source: "exit_code", success: c.engine === true, weight: 1 };
    if (report.trusted) return { source: report.source, success: report.success, weight: report.weight };
    const total = untrustedWeight.get(report.reporter) ?? report.weight;
    const scale = total > ONE_VOTE ? ONE_VOTE / total : 1;
    return { source: report.source, success: report.success, weight: report.weight * scale };
  });
}

/**
 * The verdicts (true: success, false: failure) that at least `quorum` distinct untrusted reporters
 * gave among `window`.
 */
export function agreedVerdicts(window: readonly WindowCandidate[], quorum: number): Set<boolean> {
  const reporters = new Map<boolean, Set<string>>([
    [true, new Set()],
    [false, new Set()],
  ]);
  for (const c of window) {
    if (c.report && !c.report.trusted) reporters.get(c.report.success)?.add(c.report.reporter);
  }
  return new Set([true, false].filter((verdict) => (reporters.get(verdict)?.size ?? 0) >= quorum));
}

function counts(report: Report | undefined, agreed: ReadonlySet<boolean>): boolean {
  return report !== undefined && (report.trusted || agreed.has(report.success));
}

/**
 * Whether an agent's own reports on a skill's active version (its last window's worth: its explicit
 * verdicts and its implicit signals, weighted) take the skill out of that agent's own routes
 * (docs/learning.md#your-own-routes): at least `ownRouteMinReports` of them, at a rate below the
 * deprecation threshold. Other agents' routes are not touched.
 */
export function leavesOwnRoutes(own: WindowStats, policy: Pick<HealthPolicy, "ownRouteMinReports" | "deprecateBelow">): boolean {
  const weight = own.weight ?? own.samples;
  if (own.samples === 0 || own.samples < policy.ownRouteMinReports || weight <= 0) return false;
  return own.successes / weight < policy.deprecateBelow;
}
