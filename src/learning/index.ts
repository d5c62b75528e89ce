/** Skills that emerge from behaviour (docs/learning.md): sessions, candidates, evolution, outcomes, near-duplicates. The only way in. */
export { NearDuplicateScreen } from "./duplicate-screen.js";
export { implicitFailures } from "./implicit-outcomes.js";
export { LEARNING_MIRROR_FILE, LearningMirror } from "./learning-mirror.js";
export {
  DEFAULT_LEARNING_POLICY,
  type LearningEvents,
  type LearningPolicy,
  LearningService,
  type Promotion,
  type RecordedSession,
} from "./learning-service.js";
export { jsonNesting, SESSION_FIELD_LIMITS } from "./session-input.js";
export { CANDIDATE_STATUSES, type CandidateRecord, type CandidateStatus, type EvolutionRecord, LearningStore } from "./learning-store.js";
export {
  codeShingles,
  cosine,
  DEFAULT_DUPLICATE_THRESHOLDS,
  type DuplicateThresholds,
  isNearDuplicate,
  jaccard,
  NearDuplicateDetector,
  normalisedTokens,
} from "./near-duplicates.js";
export { promotionPlan } from "./promotion-plan.js";
export { sequenceOverlap, sessionWindows, shapeOf } from "./sequence.js";
