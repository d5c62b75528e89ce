import type { CallContext } from "../control/index.js";
import type { Page, PageRequest } from "../paging/index.js";
import { CandidateReview, type Promotion } from "./candidate-review.js";
import { evolutionOf } from "./evolution.js";
import type { LearningDeps } from "./learning-deps.js";
import type { LearningPolicy } from "./learning-policy.js";
import type { CandidateRecord, CandidateStatus, EvolutionRecord } from "./learning-store.js";
import { OutcomeReports, type RecordedOutcome } from "./outcome-reports.js";
import { PatternQuota } from "./pattern-quota.js";
import { type RecordedSession, SessionRecorder } from "./session-recorder.js";
import type { ToolCallInput } from "./session-input.js";
import { SliceGate } from "./slices.js";

export interface LearningServiceOptions extends Omit<LearningDeps, "now"> {
  /** @default the system clock */
  readonly now?: () => Date;
}

/**
 * Skills that emerge from behaviour (docs/learning.md): sessions → patterns → candidates →
 * composed skills, evolution of auto-created skills, and outcomes beyond the exit code. Everything
 * is scoped by the calling agent. A front over the parts, one per reason to change: recording
 * (session-recorder.ts, candidate-proposal.ts, pattern-quota.ts), the agent's decisions on its
 * candidates (candidate-review.ts, evolution.ts) and outcomes (outcome-reports.ts).
 */
export class LearningService {
  private readonly deps: LearningDeps;
  private readonly recorder: SessionRecorder;
  private readonly candidates: CandidateReview;
  private readonly outcomes: OutcomeReports;

  constructor(options: LearningServiceOptions) {
    this.deps = { ...options, now: options.now ?? (() => new Date()) };
    // Every recording's slices take turns here: one slice per turn of the event loop (docs/learning.md#large-sessions).
    const slices = new SliceGate();
    this.candidates = new CandidateReview(this.deps);
    this.outcomes = new OutcomeReports(this.deps, slices);
    this.recorder = new SessionRecorder(this.deps, {
      slices,
      quota: new PatternQuota(this.deps, slices),
      outcomes: this.outcomes,
      candidates: this.candidates,
    });
  }

  get policy(): LearningPolicy {
    return this.deps.policy;
  }

  /** RecordSession (docs/learning.md#patterns); see {@link SessionRecorder.record}. */
  recordSession(sessionKey: string, calls: readonly ToolCallInput[], context: CallContext): Promise<RecordedSession> {
    return this.recorder.record(sessionKey, calls, context);
  }

  list(status: CandidateStatus | undefined, context: CallContext): CandidateRecord[] {
    return this.candidates.list(status, context);
  }

  /** ListCandidates' pages; see {@link CandidateReview.listPage}. */
  listPage(input: { readonly status: CandidateStatus | undefined } & PageRequest, context: CallContext): Page<CandidateRecord> {
    return this.candidates.listPage(input, context);
  }

  dismiss(id: number, context: CallContext): CandidateRecord {
    return this.candidates.dismiss(id, context);
  }

  /** PromoteCandidate (docs/learning.md#promotion); see {@link CandidateReview.promote}. */
  promote(id: number, overrides: { name?: string; description?: string }, context: CallContext): Promise<Promotion> {
    return this.candidates.promote(id, overrides, context);
  }

  /** ListSkillEvolution (docs/learning.md#evolution), one page of it. */
  evolution(input: { readonly name: string } & PageRequest, context: CallContext): Page<EvolutionRecord> {
    return evolutionOf(input, context, this.deps);
  }

  /** RecordSkillOutcome (docs/learning.md#outcomes); see {@link OutcomeReports.recordExplicit}. */
  recordOutcome(name: string, invocationId: string, success: boolean, note: string, context: CallContext): Promise<RecordedOutcome> {
    return this.outcomes.recordExplicit(name, invocationId, success, note, context);
  }
}
