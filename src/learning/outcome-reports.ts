import type { CallContext, SkillRecord } from "../control/index.js";
import { InvalidArgumentError, NotFoundError } from "../errors/index.js";
import { type ImplicitFailure, implicitFailures } from "./implicit-outcomes.js";
import type { LearningDeps } from "./learning-deps.js";
import type { ParsedCall } from "./session-input.js";
import { forEachSlice, type SliceGate, type Slicing } from "./slices.js";

/** Slice sizes of the implicit signals (docs/learning.md#large-sessions). */
const SLICES = {
  /** Calls compared for implicit outcomes in one slice. */
  implicit: 1_000,
  /** Implicit signals written in one slice (each one durable write). */
  signals: 50,
} as const;

/** What RecordSkillOutcome answers: the exit code's verdict, whether the caller's replaced it, and the skill after. */
export interface RecordedOutcome {
  readonly exitCodeSuccess: boolean;
  readonly overridden: boolean;
  readonly skill: SkillRecord;
}

/** Outcomes beyond the exit code (docs/learning.md#outcomes): an agent's explicit verdicts and the implicit signals of its sessions. */
export class OutcomeReports {
  constructor(
    private readonly deps: Pick<LearningDeps, "skills" | "registry" | "policy" | "mirror" | "now">,
    private readonly slices: SliceGate,
  ) {}

  /**
   * RecordSkillOutcome (docs/learning.md#outcomes): the caller's verdict on one of its invocations
   * of `name`; it replaces the exit code's verdict of that invocation in the rolling window, as far
   * as the caller's reports count there (docs/learning.md#whose-reports-count).
   */
  async recordExplicit(name: string, invocationId: string, success: boolean, note: string, context: CallContext): Promise<RecordedOutcome> {
    const { skills, registry } = this.deps;
    const before = skills.queries.versions({ name }, context).skill;
    if (!/^\d{1,15}$/.test(invocationId.trim())) {
      throw new InvalidArgumentError("invocation_id", "must be the invocation_id InvokeSkill returned (digits)");
    }
    if (note.length > 2_000) throw new InvalidArgumentError("note", "is longer than 2000 characters");
    const id = Number(invocationId.trim());
    const invocation = registry.invocation(id);
    if (!invocation || invocation.name !== name || (!context.caller.admin && invocation.caller !== context.caller.agentId)) {
      throw new NotFoundError(`"${name}" has no invocation ${invocationId} of yours`);
    }
    // The owner's and admins' verdicts count toward the shared window at once; another agent's
    // only as docs/learning.md#whose-reports-count says, and its own routes follow it at once.
    const after = registry.recordExplicitOutcome(id, success, note, context.caller, this.deps.now());
    await skills.followStatusChange(before, after);
    this.deps.mirror?.schedule();
    return { exitCodeSuccess: invocation.success, overridden: invocation.success !== success, skill: after };
  }

  /**
   * Implicit failure signals (docs/learning.md#implicit-outcomes) of a recorded session's calls, for
   * the skills the caller can see, in slices; answers how many it found.
   */
  async recordImplicit(calls: readonly ParsedCall[], context: CallContext): Promise<number> {
    const { skills, registry, policy } = this.deps;
    const visible = new Set(skills.queries.list({}, context).map((s) => s.name));
    const failures: ImplicitFailure[] = [];
    const turns: Slicing = { turn: () => this.slices.turn() };
    await forEachSlice(
      calls,
      SLICES.implicit,
      (slice, offset) => {
        // One call past the slice: a call's retry may be the next slice's first call.
        for (const failure of implicitFailures(calls.slice(offset, offset + slice.length + 1), visible)) {
          failures.push({ ...failure, index: failure.index + offset });
        }
      },
      turns,
    );
    // The signals are written to the end even if the call is cancelled: the session is recorded, and
    // recording it again adds none.
    await forEachSlice(
      failures,
      SLICES.signals,
      (slice) => {
        for (const failure of slice) {
          const before = registry.get(failure.skill);
          if (!before) continue;
          const after = registry.recordSignal(
            failure.skill,
            "implicit",
            false,
            policy.implicitWeight,
            `retried with "${failure.retriedWith}" on the same arguments (call ${failure.index + 1})`,
            // A report by the session's agent: it counts toward the shared window as that agent's
            // (docs/learning.md#whose-reports-count).
            context.caller,
            this.deps.now(),
          );
          void skills.followStatusChange(before, after);
        }
      },
      turns,
    );
    return failures.length;
  }
}
