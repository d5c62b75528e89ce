/** The learning rules (docs/learning.md); every number configurable. */
export interface LearningPolicy {
  /** Distinct sessions of one agent a pattern needs to become a candidate. @default 3 */
  readonly candidateThreshold: number;
  /** Shortest window that counts as a pattern. @default 3 */
  readonly minSequenceLength: number;
  /** Longest window hashed as a pattern. @default 6 */
  readonly maxSequenceLength: number;
  /** New candidates one recorded session may create. @default 5 */
  readonly maxCandidatesPerSession: number;
  /** Open candidates (status candidate) one agent keeps. @default 100 */
  readonly maxOpenCandidates: number;
  /** Promote a candidate as soon as it reaches the threshold. @default false */
  readonly autoPromote: boolean;
  /** Overlap with an auto-created skill's sequence at which promotion updates that skill. @default 0.7 */
  readonly evolutionOverlap: number;
  /** Weight of an implicit signal in the window (explicit and exit-code samples weigh 1). @default 0.5 */
  readonly implicitWeight: number;
  /** Tool calls one RecordSession may hold. @default 10,000 */
  readonly maxSessionCalls: number;
  /** UTF-8 bytes of one session's tool names and arguments together. @default 2 MiB */
  readonly maxSessionBytes: number;
  /** Patterns (counts of windows not yet candidates) one agent keeps; past it the oldest and least frequent go. @default 50,000 */
  readonly maxPatternsPerAgent: number;
}

export const DEFAULT_LEARNING_POLICY: LearningPolicy = {
  candidateThreshold: 3,
  minSequenceLength: 3,
  maxSequenceLength: 6,
  maxCandidatesPerSession: 5,
  maxOpenCandidates: 100,
  autoPromote: false,
  evolutionOverlap: 0.7,
  implicitWeight: 0.5,
  maxSessionCalls: 10_000,
  maxSessionBytes: 2 * 1024 * 1024,
  maxPatternsPerAgent: 50_000,
};
