/** Skills that emerge from behaviour (docs/learning.md): sessions, candidates, evolution, outcomes, near-duplicates. The only way in. */
export { NearDuplicateScreen } from "./duplicate-screen.js";
export { implicitFailures } from "./implicit-outcomes.js";
export { LEARNING_MIRROR_FILE, LearningMirror } from "./learning-mirror.js";
export type { LearningEvents } from "./learning-deps.js";
export { type InstructionsRegistrar, type InstructionsSkill, instructionsSkillMd } from "./instructions-plan.js";
export { DEFAULT_LEARNING_POLICY, type LearningPolicy } from "./learning-policy.js";
export { LearningService } from "./learning-service.js";
export type { Promotion } from "./candidate-review.js";
export type { RecordedSession } from "./session-recorder.js";
export { jsonNesting, SESSION_FIELD_LIMITS } from "./session-input.js";
export { CANDIDATE_STATUSES, type CandidateRecord, type CandidateStatus, type EvolutionRecord, LearningStore } from "./learning-store.js";
export {
  codeShingles,
  cosine,
  DEFAULT_DUPLICATE_THRESHOLDS,
  DUPLICATE_CANDIDATES,
  type DuplicateThresholds,
  isNearDuplicate,
  jaccard,
  NearDuplicateDetector,
  normalisedTokens,
} from "./near-duplicates.js";
export { promotionPlan } from "./promotion-plan.js";
export { sequenceOverlap, sessionWindows, shapeOf } from "./sequence.js";
