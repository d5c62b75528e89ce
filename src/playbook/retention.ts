/**
 * Retention (docs/playbook.md#retention): the utility of a lesson, the verification rule, which
 * lessons the 50-lesson cap keeps and which ones a prune drops. Pure functions of the records.
 */
import type { LessonRecord, PlaybookPolicy } from "./lesson.js";

const DAY_MS = 86_400_000;

/** helpful_retrievals / retrievals; 0 for a lesson never retrieved. */
export function hitRate(lesson: Pick<LessonRecord, "retrievals" | "helpfulRetrievals">): number {
  return lesson.retrievals > 0 ? Math.min(1, lesson.helpfulRetrievals / lesson.retrievals) : 0;
}

/** freq: the times the lesson was added (1 + merged duplicates) plus the times it was retrieved. */
export function frequency(lesson: Pick<LessonRecord, "timesAdded" | "retrievals">): number {
  return Math.max(1, lesson.timesAdded + lesson.retrievals);
}

/**
 * A negative number that grows with the days since the lesson last helped (since it was added,
 * when it never has): −stalePenaltyPerDay per day, never below −maxStalePenalty.
 */
export function stalePenalty(lesson: Pick<LessonRecord, "createdAt" | "lastHelpfulAt">, now: number, policy: PlaybookPolicy): number {
  const since = lesson.lastHelpfulAt ?? lesson.createdAt;
  const days = Math.max(0, now - since) / DAY_MS;
  const penalty = Math.min(policy.maxStalePenalty, days * policy.stalePenaltyPerDay);
  return penalty === 0 ? 0 : -penalty;
}

/**
 * utility = confidence·0.5 + hit_rate·0.8 + (0.3 if verified) + ln(freq)·0.1 + stale_penalty.
 */
export function utility(lesson: LessonRecord, now: number, policy: PlaybookPolicy): number {
  return (
    lesson.confidence * 0.5 +
    hitRate(lesson) * 0.8 +
    (lesson.verified ? 0.3 : 0) +
    Math.log(frequency(lesson)) * 0.1 +
    stalePenalty(lesson, now, policy)
  );
}

/** One verification run of the solver, without and with the lesson prepended. */
export interface VerificationRun {
  readonly originalPassed: boolean;
  readonly originalAttempts: number;
  readonly verifyPassed: boolean;
  readonly verifyAttempts: number;
}

/**
 * Verified only when the outcome strictly improves: the original failed and the verify run
 * passed, or the original needed ≥ 2 attempts and the verify run passed on the first.
 */
export function verificationOutcome(run: VerificationRun): { verified: boolean; reason: string } {
  if (!run.verifyPassed) return { verified: false, reason: "the run with the lesson did not pass" };
  if (!run.originalPassed) return { verified: true, reason: "the original failed and the run with the lesson passed" };
  if (run.originalAttempts >= 2 && run.verifyAttempts === 1) {
    return { verified: true, reason: `the original took ${run.originalAttempts} attempts and the run with the lesson passed on the first` };
  }
  return {
    verified: false,
    reason:
      run.originalAttempts < 2
        ? "the original already passed on the first attempt: nothing to improve"
        : `the run with the lesson took ${run.verifyAttempts} attempts, not 1`,
  };
}

/** Trim order class: head pins first, then verified, then the rest. */
function tier(lesson: LessonRecord): number {
  if (lesson.pinned) return 0;
  if (lesson.verified) return 1;
  return 2;
}

/**
 * The cap: the lessons to keep and those to archive, among one agent's active lessons. Kept in
 * the trim order (head pins, then verified pins, then the highest-utility unverified lessons),
 * each class by utility and, at equal utility, newest first; everything past `maxLessons` is archived.
 */
export function trimToCap(
  active: readonly LessonRecord[],
  now: number,
  policy: PlaybookPolicy,
): { keep: LessonRecord[]; archive: LessonRecord[] } {
  if (active.length <= policy.maxLessons) return { keep: [...active], archive: [] };
  const ranked = active
    .map((lesson) => ({ lesson, tier: tier(lesson), utility: utility(lesson, now, policy) }))
    .sort(
      (a, b) =>
        a.tier - b.tier || b.utility - a.utility || b.lesson.createdAt - a.lesson.createdAt || a.lesson.id.localeCompare(b.lesson.id),
    );
  return {
    keep: ranked.slice(0, policy.maxLessons).map((r) => r.lesson),
    archive: ranked.slice(policy.maxLessons).map((r) => r.lesson),
  };
}

/**
 * A prune of one agent's active lessons: those surfaced at least `minRetrievals` times and never
 * helpful, neither verified nor pinned, lowest utility first, at most ⌊maxDropFraction × active⌋.
 */
export function pruneSelection(
  active: readonly LessonRecord[],
  options: { readonly minRetrievals: number; readonly maxDropFraction: number },
  now: number,
  policy: PlaybookPolicy,
): LessonRecord[] {
  const budget = Math.floor(options.maxDropFraction * active.length + 1e-9);
  if (budget <= 0) return [];
  return active
    .filter((l) => !l.verified && !l.pinned && l.helpfulRetrievals === 0 && l.retrievals >= options.minRetrievals)
    .map((lesson) => ({ lesson, utility: utility(lesson, now, policy) }))
    .sort((a, b) => a.utility - b.utility || b.lesson.retrievals - a.lesson.retrievals || a.lesson.id.localeCompare(b.lesson.id))
    .slice(0, budget)
    .map((r) => r.lesson);
}
