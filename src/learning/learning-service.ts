import type { Logger } from "pino";
import type { CallContext, ControlPlane, SkillRecord, SkillRegistry } from "../control/index.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, errorMessage } from "../errors/index.js";
import { type CandidateRecord, type CandidateStatus, type EvolutionRecord, LearningStore, sessionHashKey } from "./learning-store.js";
import type { LearningMirror } from "./learning-mirror.js";
import { promotionPlan } from "./promotion-plan.js";
import {
  allWindows,
  type CountedWindow,
  derivedSkillName,
  distinctWindows,
  mechanicalDescription,
  selectCandidateWindows,
  type SequenceStep,
  sequenceOverlap,
  type SessionWindow,
} from "./sequence.js";
import { type ImplicitFailure, implicitFailures } from "./implicit-outcomes.js";
import { type ParsedCall, parseSession, type ToolCallInput } from "./session-input.js";
import { collectInSlices, forEachSlice, SliceGate, type Slicing } from "./slices.js";

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

/**
 * Slice sizes of a recording (docs/learning.md#large-sessions): each slice is a few milliseconds of
 * the event loop, and each write slice one bounded transaction.
 */
const SLICES = {
  /** Windows hashed in one slice. */
  hash: 2_000,
  /** Windows counted (upsert, candidate lookup) in one transaction: a 200-call session's 786 in one. */
  count: 1_000,
  /** Patterns removed for the quota in one transaction. */
  evict: 1_000,
  /** Calls compared for implicit outcomes in one slice. */
  implicit: 1_000,
  /** Implicit signals written in one slice (each one durable write). */
  signals: 50,
} as const;

/** Counters for the metrics (docs/operations.md#metrics). */
export interface LearningEvents {
  promoted?(evolved: boolean): void;
}

export interface RecordedSession {
  readonly candidates: CandidateRecord[];
  readonly promotedSkills: string[];
  readonly toolCalls: number;
  readonly alreadyRecorded: boolean;
  readonly implicitFailures: number;
}

export interface Promotion {
  readonly candidate: CandidateRecord;
  readonly skill: SkillRecord;
  readonly evolution: EvolutionRecord | undefined;
}

export interface LearningServiceOptions {
  readonly store: LearningStore;
  /** The control plane's use cases learning calls: listings, composed registration, status follow-up. */
  readonly skills: Pick<ControlPlane, "queries" | "composedRegistration" | "followStatusChange">;
  readonly registry: SkillRegistry;
  readonly policy: LearningPolicy;
  readonly logger: Logger;
  readonly mirror?: LearningMirror;
  readonly events?: LearningEvents;
  readonly now?: () => Date;
}

/**
 * Skills that emerge from behaviour (docs/learning.md): sessions → patterns → candidates →
 * composed skills, evolution of auto-created skills, and outcomes beyond the exit code. Everything
 * is scoped by the calling agent.
 */
export class LearningService {
  private readonly promoting = new Set<number>();
  /** The recording in progress of each agent and session key: the same session is recorded one call at a time. */
  private readonly recording = new Map<string, Promise<unknown>>();
  /**
   * Per agent, an upper bound of its stored patterns: its count when last counted plus every pattern
   * added since, so the quota is counted (an index scan) only when the bound passes it.
   */
  private readonly patternBound = new Map<string, number>();
  /** Every recording's slices take turns here: one slice per turn of the event loop (docs/learning.md#large-sessions). */
  private readonly slices = new SliceGate();
  private readonly now: () => Date;

  constructor(private readonly options: LearningServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  get policy(): LearningPolicy {
    return this.options.policy;
  }

  /**
   * RecordSession (docs/learning.md#patterns). Done in slices that take turns with every other
   * recording's, one per turn of the event loop (docs/learning.md#large-sessions): parsing, hashing,
   * counting (one bounded transaction a slice) and the agent's pattern quota, kept as it goes.
   */
  async recordSession(sessionKey: string, calls: readonly ToolCallInput[], context: CallContext): Promise<RecordedSession> {
    const agent = context.caller.agentId;
    const { policy } = this.options;
    const slicing: Slicing = { turn: () => this.slices.turn(), signal: context.signal };
    const parsed = await parseSession(sessionKey, calls, policy, slicing);
    const steps: SequenceStep[] = parsed.map((c) => ({ tool: c.tool, shape: c.shape }));
    const windows = distinctWindows(
      await collectInSlices(allWindows(steps, policy.minSequenceLength, policy.maxSequenceLength), SLICES.hash, slicing),
    );
    const at = this.now().toISOString();
    const outcome = await this.oneRecordingAtATime(`${agent}\n${sessionKey}`, () =>
      this.countAndPropose(agent, sessionKey, parsed, steps, windows, at, slicing),
    );
    await this.keepPatternQuota(agent);
    let implicit = 0;
    if (!outcome.alreadyRecorded) implicit = await this.recordImplicitSignals(parsed, context);
    if (outcome.fresh.length > 0 || outcome.touched.length > 0) this.options.mirror?.schedule();
    const promotedSkills: string[] = [];
    if (policy.autoPromote) {
      for (const candidate of outcome.promotable) {
        if (candidate.status !== "candidate" || candidate.occurrences < policy.candidateThreshold) continue;
        try {
          const promotion = await this.promote(candidate.id, {}, context);
          promotedSkills.push(promotion.skill.name);
        } catch (error) {
          this.options.logger.info(
            { candidate: candidate.id, agent, reason: errorMessage(error) },
            "candidate not auto-promoted; it stays a candidate",
          );
        }
      }
    }
    const { store } = this.options;
    // Re-read only when auto-promotion may have changed them.
    const candidates = [...outcome.touched, ...outcome.fresh]
      .map((c) => (promotedSkills.length > 0 ? (store.candidate(c.id) as CandidateRecord) : c))
      .sort((a, b) => a.id - b.id);
    this.options.logger.info(
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
   * Runs `work` after the recording of the same agent and session key in progress, if any: a session
   * recorded twice at once must not count its patterns twice, and its set of counted patterns is read
   * once at the start of a recording.
   */
  private async oneRecordingAtATime<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.recording.get(key) ?? Promise.resolve();
    const run = previous.then(work, work);
    const settled = run.catch(() => undefined);
    this.recording.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.recording.get(key) === settled) this.recording.delete(key);
    }
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
  ): Promise<{ touched: CandidateRecord[]; fresh: CandidateRecord[]; promotable: CandidateRecord[]; alreadyRecorded: boolean }> {
    const { store, policy } = this.options;
    const before = store.session(agent, sessionKey);
    const counted = new Set(before.hashes);
    const newlyCounted = new Set<string>();
    const touched: CandidateRecord[] = [];
    const uncovered: CountedWindow[] = [];
    /** Chooses and inserts new candidates and marks the session recorded: inside the last slice's transaction. */
    const propose = (): CandidateRecord[] => {
      const created: CandidateRecord[] = [];
      for (const window of selectCandidateWindows(uncovered, policy.candidateThreshold, policy.maxCandidatesPerSession)) {
        // Another recording of the agent may have proposed it (or a longer sequence holding it) meanwhile.
        if (store.isCovered(agent, window.hash)) continue;
        // At the per-agent cap of open candidates, a new one must have been seen in more sessions
        // than the weakest open one, which gives way (its pattern keeps its count).
        if (store.openCount(agent) >= policy.maxOpenCandidates) {
          const weakest = store.weakestOpen(agent);
          if (!weakest || weakest.occurrences >= window.sessions) continue;
          store.removeCandidate(weakest.id);
        }
        const sequence = steps.slice(window.start, window.start + window.length);
        created.push(
          store.insertCandidate({
            agentId: agent,
            hash: window.hash,
            name: derivedSkillName(sequence, window.hash),
            description: mechanicalDescription(sequence),
            toolSequence: sequence,
            sessionKeys: store.pattern(agent, window.hash).sessionKeys,
            occurrences: window.sessions,
            exampleArguments: argumentsOf(parsed, window),
            at,
          }),
        );
      }
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
          this.notePatternsAdded(agent, added);
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
        await this.keepPatternQuota(agent);
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

  /**
   * The agent's pattern quota (docs/learning.md#pattern-quota): past it, the oldest and least frequent
   * patterns go, a bounded transaction at a time. Not stopped by the call's cancellation: it is the
   * service's housekeeping, and what is left over goes at the agent's next session.
   */
  private async keepPatternQuota(agent: string): Promise<void> {
    const { store, policy } = this.options;
    const bound = this.patternBound.get(agent);
    if (bound !== undefined && bound <= policy.maxPatternsPerAgent) return;
    for (;;) {
      await this.slices.turn();
      const { removed, left, more } = store.transaction("keep the pattern quota", () => {
        const count = store.patternCount(agent);
        const excess = count - policy.maxPatternsPerAgent;
        if (excess <= 0) return { removed: 0, left: count, more: false };
        const n = store.evictPatterns(agent, Math.min(excess, SLICES.evict));
        return { removed: n, left: count - n, more: excess > SLICES.evict && n > 0 };
      });
      if (removed > 0) this.options.logger.debug({ agent, removed }, "patterns over the agent's quota removed");
      if (!more) {
        // Exact as of this transaction; patterns other recordings add from now on are added to it.
        this.patternBound.set(agent, left);
        return;
      }
    }
  }

  /** Committed new patterns of an agent raise its bound (an agent not counted yet is counted at its next check). */
  private notePatternsAdded(agent: string, added: number): void {
    const bound = this.patternBound.get(agent);
    if (bound !== undefined && added > 0) this.patternBound.set(agent, bound + added);
  }

  /** Implicit failure signals (docs/learning.md#implicit-outcomes) for the skills the caller can see, in slices. */
  private async recordImplicitSignals(calls: readonly ParsedCall[], context: CallContext): Promise<number> {
    const visible = new Set(this.options.skills.queries.list({}, context).map((s) => s.name));
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
          const before = this.options.registry.get(failure.skill);
          if (!before) continue;
          const after = this.options.registry.recordSignal(
            failure.skill,
            "implicit",
            false,
            this.options.policy.implicitWeight,
            `retried with "${failure.retriedWith}" on the same arguments (call ${failure.index + 1})`,
            // A report by the session's agent: it counts toward the shared window as that agent's
            // (docs/learning.md#whose-reports-count).
            context.caller,
            this.now(),
          );
          void this.options.skills.followStatusChange(before, after);
        }
      },
      turns,
    );
    return failures.length;
  }

  list(status: CandidateStatus | undefined, context: CallContext): CandidateRecord[] {
    return this.options.store.candidates(context.caller.agentId, status);
  }

  dismiss(id: number, context: CallContext): CandidateRecord {
    const candidate = this.ownCandidate(id, context);
    if (candidate.status === "promoted") {
      throw new FailedPreconditionError(`candidate ${id} was already promoted to "${candidate.skillName}"; delete that skill instead`);
    }
    const dismissed = this.options.store.transaction("dismiss a candidate", () =>
      this.options.store.setStatus(id, "dismissed", undefined, ""),
    );
    this.options.mirror?.schedule();
    return dismissed;
  }

  /**
   * PromoteCandidate (docs/learning.md#promotion): a composed skill of the candidate's tools, or, when
   * its sequence overlaps an auto-created skill of the same agent by the evolution threshold, a new
   * version of that skill (docs/learning.md#evolution).
   */
  async promote(id: number, overrides: { name?: string; description?: string }, context: CallContext): Promise<Promotion> {
    const candidate = this.ownCandidate(id, context);
    if (candidate.status !== "candidate") {
      throw new FailedPreconditionError(
        `candidate ${id} is ${candidate.status}${candidate.skillName ? ` ("${candidate.skillName}")` : ""}`,
      );
    }
    if (this.promoting.has(id)) throw new FailedPreconditionError(`candidate ${id} is being promoted by another call`);
    this.promoting.add(id);
    try {
      const visible = new Map(this.options.skills.queries.list({}, context).map((s) => [s.name, s]));
      const missing = candidate.toolSequence.map((s) => s.tool).filter((tool) => !visible.has(tool));
      if (missing.length > 0) {
        throw new FailedPreconditionError(
          `cannot promote candidate ${id}: tool "${missing[0]}" is not a skill you can invoke` +
            `${missing.length > 1 ? ` (nor ${[...new Set(missing.slice(1))].map((m) => `"${m}"`).join(", ")})` : ""}; register it first or dismiss the candidate`,
        );
      }
      const target = this.evolutionTarget(candidate, context);
      const plan = promotionPlan(candidate.toolSequence, candidate.exampleArguments);
      const name = target?.skill.name ?? (overrides.name?.trim() || candidate.name);
      const description = overrides.description?.trim() || candidate.description;
      const registered = await this.options.skills.composedRegistration.register(
        {
          name,
          description,
          parametersSchema: plan.parametersSchema,
          steps: plan.steps,
          output: "",
          testPayload: plan.testPayload,
          // An evolution is a new version of the same skill, never a duplicate of it.
          onDuplicate: "warn",
        },
        context,
      );
      const at = this.now();
      const skill = this.options.registry.markAutoCreated(registered.skill.name, at);
      const result = this.options.store.transaction("record a promotion", () => {
        const promoted = this.options.store.setStatus(id, "promoted", at.toISOString(), skill.name);
        const evolution = target
          ? this.options.store.addEvolution({
              agentId: context.caller.agentId,
              skillName: skill.name,
              fromVersion: target.skill.version,
              toVersion: skill.version,
              candidateId: id,
              overlap: target.overlap,
              summary: `sequence ${target.from.map((s) => s.tool).join(" → ")} became ${candidate.toolSequence.map((s) => s.tool).join(" → ")}`,
              at: at.toISOString(),
            })
          : undefined;
        return { candidate: promoted, skill, evolution };
      });
      this.options.events?.promoted?.(target !== undefined);
      this.options.mirror?.schedule();
      this.options.logger.info(
        { candidate: id, skill: skill.name, version: skill.version, evolved: target !== undefined, agent: context.caller.agentId },
        target ? "auto-created skill evolved" : "candidate promoted",
      );
      return result;
    } finally {
      this.promoting.delete(id);
    }
  }

  /** The auto-created skill of this agent whose sequence this candidate's overlaps most, at or above the threshold. */
  private evolutionTarget(
    candidate: CandidateRecord,
    context: CallContext,
  ): { skill: SkillRecord; overlap: number; from: SequenceStep[] } | undefined {
    const tools = candidate.toolSequence.map((s) => s.tool);
    let best: { skill: SkillRecord; overlap: number; from: SequenceStep[] } | undefined;
    const seen = new Set<string>();
    for (const promoted of this.options.store.promotedSequences(context.caller.agentId)) {
      // The newest promotion of a skill is its current sequence.
      if (seen.has(promoted.skillName)) continue;
      seen.add(promoted.skillName);
      const skill = this.options.registry.get(promoted.skillName);
      if (!skill || !skill.autoCreated || skill.owner !== context.caller.agentId) continue;
      if (skill.status === "retired" || skill.status === "deleted") continue;
      const overlap = sequenceOverlap(
        tools,
        promoted.toolSequence.map((s) => s.tool),
      );
      if (overlap >= this.options.policy.evolutionOverlap && (!best || overlap > best.overlap)) {
        best = { skill, overlap, from: promoted.toolSequence };
      }
    }
    return best;
  }

  evolution(name: string, context: CallContext): EvolutionRecord[] {
    this.options.skills.queries.versions({ name }, context); // NOT_FOUND unless the caller may see it
    return this.options.store.evolution(name);
  }

  /**
   * RecordSkillOutcome (docs/learning.md#outcomes): the caller's verdict on one of its invocations
   * of `name`; it replaces the exit code's verdict of that invocation in the rolling window, as far
   * as the caller's reports count there (docs/learning.md#whose-reports-count).
   */
  async recordOutcome(
    name: string,
    invocationId: string,
    success: boolean,
    note: string,
    context: CallContext,
  ): Promise<{ exitCodeSuccess: boolean; overridden: boolean; skill: SkillRecord }> {
    const before = this.options.skills.queries.versions({ name }, context).skill;
    if (!/^\d{1,15}$/.test(invocationId.trim())) {
      throw new InvalidArgumentError("invocation_id", "must be the invocation_id InvokeSkill returned (digits)");
    }
    if (note.length > 2_000) throw new InvalidArgumentError("note", "is longer than 2000 characters");
    const id = Number(invocationId.trim());
    const invocation = this.options.registry.invocation(id);
    if (!invocation || invocation.name !== name || (!context.caller.admin && invocation.caller !== context.caller.agentId)) {
      throw new NotFoundError(`"${name}" has no invocation ${invocationId} of yours`);
    }
    // The owner's and admins' verdicts count toward the shared window at once; another agent's
    // only as docs/learning.md#whose-reports-count says, and its own routes follow it at once.
    const after = this.options.registry.recordExplicitOutcome(id, success, note, context.caller, this.now());
    await this.options.skills.followStatusChange(before, after);
    this.options.mirror?.schedule();
    return { exitCodeSuccess: invocation.success, overridden: invocation.success !== success, skill: after };
  }

  private ownCandidate(id: number, context: CallContext): CandidateRecord {
    if (!Number.isInteger(id) || id <= 0) throw new InvalidArgumentError("id", "must be a candidate id (ListCandidates)");
    const candidate = this.options.store.candidate(id);
    // Another agent's candidate answers exactly as one that does not exist.
    if (!candidate || candidate.agentId !== context.caller.agentId) throw new NotFoundError(`no candidate ${id}`);
    return candidate;
  }
}

function argumentsOf(calls: readonly ParsedCall[], window: { start: number; length: number }): unknown[] {
  return calls.slice(window.start, window.start + window.length).map((c) => c.args);
}
