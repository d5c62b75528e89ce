import type { Logger } from "pino";
import type { ControlPlane, SkillRegistry } from "../control/index.js";
import type { InstructionsRegistrar } from "./instructions-plan.js";
import type { LearningMirror } from "./learning-mirror.js";
import type { LearningPolicy } from "./learning-policy.js";
import type { LearningStore } from "./learning-store.js";

/** Counters for the metrics (docs/operations.md#metrics). */
export interface LearningEvents {
  promoted?(evolved: boolean): void;
}

/** What the parts of learning (recording, candidates, evolution, outcomes) share; each takes the fields it uses. */
export interface LearningDeps {
  readonly store: LearningStore;
  /** The control plane's use cases learning calls: listings, composed registration, status follow-up. */
  readonly skills: Pick<ControlPlane, "queries" | "composedRegistration" | "followStatusChange">;
  readonly registry: SkillRegistry;
  readonly policy: LearningPolicy;
  readonly logger: Logger;
  readonly mirror?: LearningMirror;
  readonly events?: LearningEvents;
  readonly now: () => Date;
  /** Promotion of a routine with tools that are not skills (docs/learning.md#promotion); without it such a candidate is refused. */
  readonly instructions?: InstructionsRegistrar;
}
