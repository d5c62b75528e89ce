/** What a lesson is, and the policy every playbook rule reads its numbers from (docs/playbook.md). */

/** Where a lesson is: retrieved into prompts, set aside by the cap or a prune, or deleted by its owner. */
export type LessonState = "active" | "archived" | "deleted";

/** Why an archived lesson was set aside. */
export type ArchiveReason = "cap" | "pruned";

/** Who may read a lesson: its owner (and admins) only, or every agent (read-only). */
export type LessonVisibility = "private" | "public";

/** A lesson as the playbook stores it. Times are epoch milliseconds. */
export interface LessonRecord {
  readonly id: string;
  readonly owner: string;
  readonly trigger: string;
  readonly antiPattern: string;
  readonly correctPattern: string;
  readonly domains: readonly string[];
  readonly confidence: number;
  readonly source: string;
  readonly sourceChallengeHash: string;
  /** sha256 of the challenge text the guard compared against; the text itself is never stored. */
  readonly challengeTextHash: string;
  readonly state: LessonState;
  /** Empty unless archived. */
  readonly archivedReason: ArchiveReason | "";
  readonly visibility: LessonVisibility;
  readonly verified: boolean;
  /** The head pin: kept first by the cap, never pruned. */
  readonly pinned: boolean;
  readonly retrievals: number;
  readonly helpfulRetrievals: number;
  /** 1 + the times a duplicate was merged into it. */
  readonly timesAdded: number;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly lastRetrievedAt: number | undefined;
  readonly lastHelpfulAt: number | undefined;
}

/** The rules' numbers. Every field is a setting (src/config/config-options.ts) with the documented default. */
export interface PlaybookPolicy {
  /** Generalization guard: a run of this many tokens shared with the challenge text is a copy. @default 6 */
  readonly minCopiedNgram: number;
  /** The domain taxonomy; a lesson's domains must all be in it. @default {@link DEFAULT_LESSON_DOMAINS} */
  readonly domains: readonly string[];
  /** Retrieval: a lesson qualifies only when the cosine distance to the query is below this. @default 0.45 */
  readonly maxDistance: number;
  /** Lessons injected when GetPlaybookContext names no limit. @default 5 */
  readonly contextLimit: number;
  /** CreditRecentRetrievals' window when the request names none, in seconds. @default 300 */
  readonly creditWindowSeconds: number;
  /** PruneLessons: retrievals a lesson must have had before "never helpful" counts against it. @default 5 */
  readonly pruneMinRetrievals: number;
  /** PruneLessons: at most this fraction of an agent's active lessons per call. @default 0.25 */
  readonly pruneMaxDropFraction: number;
  /** Active lessons kept per agent; the rest are archived in the trim order. @default 50 */
  readonly maxLessons: number;
  /** Stale penalty: utility lost per day since the lesson last helped (or was added). @default 0.01 */
  readonly stalePenaltyPerDay: number;
  /** Stale penalty floor (the penalty never exceeds this). @default 0.3 */
  readonly maxStalePenalty: number;
}

/**
 * The default taxonomy: task classes an agent meets, coarse enough that a lesson's domains say
 * where it applies without naming a fixture.
 */
export const DEFAULT_LESSON_DOMAINS: readonly string[] = [
  "api",
  "coding",
  "data",
  "debugging",
  "files",
  "general",
  "math",
  "planning",
  "reasoning",
  "research",
  "security",
  "shell",
  "testing",
  "text",
  "tool-use",
  "web",
];

export const DEFAULT_PLAYBOOK_POLICY: PlaybookPolicy = {
  minCopiedNgram: 6,
  domains: DEFAULT_LESSON_DOMAINS,
  maxDistance: 0.45,
  contextLimit: 5,
  creditWindowSeconds: 300,
  pruneMinRetrievals: 5,
  pruneMaxDropFraction: 0.25,
  maxLessons: 50,
  stalePenaltyPerDay: 0.01,
  maxStalePenalty: 0.3,
};

/** The header every non-empty playbook context starts with. */
export const PLAYBOOK_HEADER = "### SKILL PLAYBOOK:";

/** Milliseconds since the epoch; injectable so tests move time instead of sleeping. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
