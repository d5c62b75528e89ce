import type { CallContext } from "../control/index.js";
import { errorMessage } from "../errors/index.js";
import { argumentsOf, proposeCandidates } from "./candidate-proposal.js";
import type { CandidateReview } from "./candidate-review.js";
import type { LearningDeps } from "./learning-deps.js";
import { type CandidateRecord, sessionHashKey } from "./learning-store.js";
import type { OutcomeReports } from "./outcome-reports.js";
import type { PatternQuota } from "./pattern-quota.js";
import { allWindows, type CountedWindow, distinctWindows, type SequenceStep, type SessionWindow } from "./sequence.js";
import { type ParsedCall, parseSession, type ToolCallInput } from "./session-input.js";
import { collectInSlices, forEachSlice, type SliceGate, type Slicing } from "./slices.js";
import { KeyedMutex } from "../concurrency/index.js";

/**
 * Slice sizes of a recording (docs/learning.md#large-sessions): each slice is a few milliseconds of
 * the event loop, and each write slice one bounded transaction.
 */
const SLICES = {
  /** Windows hashed in one slice. */
  hash: 2_000,
  /** Windows counted (upsert, candidate lookup) in one transaction: a 200-call session's 786 in one. */
  count: 1_000,
} as const;

export interface RecordedSession {
  readonly candidates: CandidateRecord[];
  readonly promotedSkills: string[];
  readonly toolCalls: number;
  readonly alreadyRecorded: boolean;
  readonly implicitFailures: number;
}

/** The parts of learning a recording hands work to. */
export interface RecorderParts {
  readonly slices: SliceGate;
  readonly quota: PatternQuota;
  readonly outcomes: Pick<OutcomeReports, "recordImplicit">;
  /** Auto-promotion (policy `autoPromote`) goes through the same use case as PromoteCandidate. */
  readonly candidates: Pick<CandidateReview, "promote">;
}

interface Counted {
  readonly touched: CandidateRecord[];
  readonly fresh: CandidateRecord[];
  readonly promotable: CandidateRecord[];
  readonly alreadyRecorded: boolean;
}

/** RecordSession (docs/learning.md#patterns): sessions → patterns → candidates, scoped by the calling agent. */
export class SessionRecorder {
  /**
   * One recording at a time per agent and session key: a session recorded twice at once must not
   * count its patterns twice, and its set of counted patterns is read once at the start of a recording.
   */
  private readonly recording = new KeyedMutex();

  constructor(
    private readonly deps: Pick<LearningDeps, "store" | "policy" | "logger" | "mirror" | "now">,
    private readonly parts: RecorderParts,
  ) {}

  /**
   * Done in slices that take turns with every other recording's, one per turn of the event loop
   * (docs/learning.md#large-sessions): parsing, hashing, counting (one bounded transaction a slice)
   * and the agent's pattern quota, kept as it goes.
   */
  async record(sessionKey: string, calls: readonly ToolCallInput[], context: CallContext): Promise<RecordedSession> {
    const agent = context.caller.agentId;
    const { policy, store } = this.deps;
    const slicing: Slicing = { turn: () => this.parts.slices.turn(), signal: context.signal };
    const parsed = await parseSession(sessionKey, calls, policy, slicing);
    const steps: SequenceStep[] = parsed.map((c) => ({ tool: c.tool, shape: c.shape }));
    const windows = distinctWindows(
      await collectInSlices(allWindows(steps, policy.minSequenceLength, policy.maxSequenceLength), SLICES.hash, slicing),
    );
    const at = this.deps.now().toISOString();
    const outcome = await this.recording.run(`${agent}\n${sessionKey}`, () =>
      this.countAndPropose(agent, sessionKey, parsed, steps, windows, at, slicing),
    );
    await this.parts.quota.keep(agent);
    let implicit = 0;
    if (!outcome.alreadyRecorded) implicit = await this.parts.outcomes.recordImplicit(parsed, context);
    if (outcome.fresh.length > 0 || outcome.touched.length > 0) this.deps.mirror?.schedule();
    const promotedSkills: string[] = [];
    if (policy.autoPromote) {
      for (const candidate of outcome.promotable) {
        if (candidate.status !== "candidate" || candidate.occurrences < policy.candidateThreshold) continue;
        try {
          const promotion = await this.parts.candidates.promote(candidate.id, {}, context, { composedOnly: true });
          promotedSkills.push(promotion.skill.name);
        } catch (error) {
          this.deps.logger.info(
            { candidate: candidate.id, agent, reason: errorMessage(error) },
            "candidate not auto-promoted; it stays a candidate",
          );
        }
      }
    }
    // Re-read only when auto-promotion may have changed them.
    const candidates = [...outcome.touched, ...outcome.fresh]
      .map((c) => (promotedSkills.length > 0 ? (store.candidate(c.id) as CandidateRecord) : c))
      .sort((a, b) => a.id - b.id);
    this.deps.logger.info(
      { agent, toolCalls: calls.length, patterns: windows.length, touched: outcome.touched.length, created: outcome.fresh.length },
      "session recorded",
    );
    return {
      candidates,
      promotedSkills,
      toolCalls: calls.length,
      alreadyRecorded: outcome.alreadyRecorded,
      implicitFailures: implicit,
    };
  }

  /**
   * Counts the session's patterns in slices of one transaction each (docs/learning.md#patterns),
   * updates the candidates it touches, and proposes new candidates from its frequent uncovered windows
   * (docs/learning.md#which-windows-count) in a last short transaction that marks the session recorded.
   */
  private async countAndPropose(
    agent: string,
    sessionKey: string,
    parsed: readonly ParsedCall[],
    steps: readonly SequenceStep[],
    windows: readonly SessionWindow[],
    at: string,
    slicing: Slicing,
  ): Promise<Counted> {
    const { store, policy } = this.deps;
    const before = store.session(agent, sessionKey);
    const counted = new Set(before.hashes);
    const newlyCounted = new Set<string>();
    const touched: CandidateRecord[] = [];
    const uncovered: CountedWindow[] = [];
    /** Proposes the new candidates and marks the session recorded: inside the last slice's transaction. */
    const propose = (): CandidateRecord[] => {
      const created = proposeCandidates({ agent, parsed, steps, uncovered, at }, this.deps);
      store.saveSession(agent, sessionKey, parsed.length, at);
      return created;
    };
    let fresh: CandidateRecord[] | undefined;
    // A cancelled call stops between slices; what the slices before committed stays counted, and
    // recording the session again counts only the rest.
    await forEachSlice(
      windows,
      SLICES.count,
      async (slice, offset) => {
        const last = offset + slice.length >= windows.length;
        const newHashes = slice.map((w) => w.hash).filter((h) => !counted.has(sessionHashKey(h)));
        store.transaction("record a session", () => {
          const counts = store.countSessionSlice(agent, sessionKey, newHashes, at);
          let added = 0;
          for (const sessions of counts.values()) if (sessions === 1) added++;
          this.parts.quota.noteAdded(agent, added);
          for (const window of slice) {
            const sessions = counts.get(window.hash) ?? store.sessionsOf(agent, window.hash);
            const existing = store.candidateByHash(agent, window.hash);
            if (existing) touched.push(store.touchCandidate(existing.id, sessions, sessionKey, argumentsOf(parsed, window)));
            // A window inside the sequence of a candidate the agent already has (any status) is that
            // candidate's part, not a new pattern (docs/learning.md#which-windows-count).
            else if (sessions >= policy.candidateThreshold && !store.isCovered(agent, window.hash)) uncovered.push({ ...window, sessions });
          }
          // One durable commit for a session that fits one slice (200 calls do).
          if (last) fresh = propose();
        });
        for (const hash of newHashes) {
          counted.add(sessionHashKey(hash));
          newlyCounted.add(hash);
        }
        // As the recording goes, not only after it: sixteen large sessions at once would otherwise
        // hold sixteen sessions' new patterns on disk at the same time.
        await this.parts.quota.keep(agent);
      },
      slicing,
    );
    // A session too short to have a window has no slice.
    fresh ??= store.transaction("record a session", propose);
    // Auto-promotion tries a candidate when it is new or seen in one more session, not on every
    // re-recording: a candidate whose promotion failed costs nothing until the agent repeats it.
    const promotable = [...fresh, ...touched.filter((c) => newlyCounted.has(c.hash))];
    return { touched, fresh, promotable, alreadyRecorded: before.recorded };
  }
}
