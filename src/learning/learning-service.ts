import type { Logger } from "pino";
import type { CallContext, SkillRecord, SkillRegistry, SkillService } from "../control/index.js";
import { FailedPreconditionError, InvalidArgumentError, NotFoundError, errorMessage } from "../errors/index.js";
import { type CandidateRecord, type CandidateStatus, type EvolutionRecord, LearningStore, sessionHashKey } from "./learning-store.js";
import type { LearningMirror } from "./learning-mirror.js";
import { promotionPlan } from "./promotion-plan.js";
import {
  type CountedWindow,
  derivedSkillName,
  mechanicalDescription,
  selectCandidateWindows,
  type SequenceStep,
  sequenceOverlap,
  sessionWindows,
  shapeOf,
} from "./sequence.js";
import { implicitFailures } from "./implicit-outcomes.js";

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
};

/** Limits on what RecordSession accepts. */
export const SESSION_LIMITS = { toolCalls: 10_000, keyChars: 256, toolChars: 128, argumentChars: 64 * 1024 } as const;

/** Counters for the metrics (docs/operations.md#metrics). */
export interface LearningEvents {
  promoted?(evolved: boolean): void;
}

export interface ToolCallInput {
  readonly tool: string;
  readonly arguments: string;
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
  readonly skills: SkillService;
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
  private readonly now: () => Date;

  constructor(private readonly options: LearningServiceOptions) {
    this.now = options.now ?? (() => new Date());
  }

  get policy(): LearningPolicy {
    return this.options.policy;
  }

  /** RecordSession (docs/learning.md#patterns). */
  async recordSession(sessionKey: string, calls: readonly ToolCallInput[], context: CallContext): Promise<RecordedSession> {
    const agent = context.caller.agentId;
    const parsed = validateSession(sessionKey, calls);
    const steps = parsed.map((c) => ({ tool: c.tool, shape: shapeOf(c.args) }));
    const { minSequenceLength, maxSequenceLength, candidateThreshold, maxCandidatesPerSession } = this.options.policy;
    const windows = sessionWindows(steps, minSequenceLength, maxSequenceLength);
    const at = this.now().toISOString();
    const { store } = this.options;
    const outcome = store.transaction("record a session", () => {
      const before = store.sessionHashes(agent, sessionKey);
      const newlyCounted = windows.map((w) => w.hash).filter((h) => !before?.has(sessionHashKey(h)));
      store.countSession(agent, sessionKey, newlyCounted);
      const all = new Set([...(before ?? []), ...windows.map((w) => sessionHashKey(w.hash))]);
      store.saveSession(agent, sessionKey, [...all], calls.length, at);
      const counted: CountedWindow[] = windows.map((w) => ({ ...w, sessions: store.sessionsOf(agent, w.hash) }));
      const touched: CandidateRecord[] = [];
      const fresh: CandidateRecord[] = [];
      for (const window of counted) {
        const existing = store.candidateByHash(agent, window.hash);
        if (existing) touched.push(store.touchCandidate(existing.id, window.sessions, sessionKey, argumentsOf(parsed, window)));
      }
      // A window inside the sequence of a candidate the agent already has (any status) is that
      // candidate's part, not a new pattern (docs/learning.md#which-windows-count).
      const uncovered = counted.filter((w) => w.sessions >= candidateThreshold && !store.isCovered(agent, w.hash));
      const chosen = selectCandidateWindows(uncovered, candidateThreshold, maxCandidatesPerSession);
      for (const window of chosen) {
        // At the per-agent cap of open candidates, a new one must have been seen in more sessions
        // than the weakest open one, which gives way (its pattern keeps its count).
        if (store.openCount(agent) >= this.options.policy.maxOpenCandidates) {
          const weakest = store.weakestOpen(agent);
          if (!weakest || weakest.occurrences >= window.sessions) continue;
          store.removeCandidate(weakest.id);
        }
        const sequence = steps.slice(window.start, window.start + window.length);
        fresh.push(
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
      // Auto-promotion tries a candidate when it is new or seen in one more session, not on every
      // re-recording: a candidate whose promotion failed costs nothing until the agent repeats it.
      const newlyCountedSet = new Set(newlyCounted);
      const promotable = [...fresh, ...touched.filter((c) => newlyCountedSet.has(c.hash))];
      return { touched, fresh, promotable, alreadyRecorded: before !== undefined };
    });
    let implicit = 0;
    if (!outcome.alreadyRecorded) implicit = this.recordImplicitSignals(parsed, context);
    if (outcome.fresh.length > 0 || outcome.touched.length > 0) this.options.mirror?.schedule();
    const promotedSkills: string[] = [];
    if (this.options.policy.autoPromote) {
      for (const candidate of outcome.promotable) {
        if (candidate.status !== "candidate" || candidate.occurrences < candidateThreshold) continue;
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

  /** Implicit failure signals (docs/learning.md#implicit-outcomes) for the skills the caller can see. */
  private recordImplicitSignals(calls: readonly ParsedCall[], context: CallContext): number {
    const visible = new Set(this.options.skills.list(context).map((s) => s.name));
    const failures = implicitFailures(calls, visible);
    for (const failure of failures) {
      const before = this.options.registry.get(failure.skill);
      if (!before) continue;
      const after = this.options.registry.recordSignal(
        failure.skill,
        "implicit",
        false,
        this.options.policy.implicitWeight,
        `retried with "${failure.retriedWith}" on the same arguments (call ${failure.index + 1})`,
        context.caller.agentId,
        this.now(),
      );
      void this.options.skills.noteStatusChange(before, after);
    }
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
      const visible = new Map(this.options.skills.list(context).map((s) => [s.name, s]));
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
      const registered = await this.options.skills.registerComposed(
        { name, description, parametersSchema: plan.parametersSchema, steps: plan.steps, output: "", testPayload: plan.testPayload },
        context,
        [],
        undefined,
        // An evolution is a new version of the same skill, never a duplicate of it.
        { onDuplicate: "warn" },
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
    this.options.skills.versions(name, context); // NOT_FOUND unless the caller may see it
    return this.options.store.evolution(name);
  }

  /**
   * RecordSkillOutcome (docs/learning.md#outcomes): the caller's verdict on one of its invocations
   * of `name`; it replaces the exit code's verdict of that invocation in the rolling window.
   */
  async recordOutcome(
    name: string,
    invocationId: string,
    success: boolean,
    note: string,
    context: CallContext,
  ): Promise<{ exitCodeSuccess: boolean; overridden: boolean; skill: SkillRecord }> {
    const before = this.options.skills.versions(name, context).skill;
    if (!/^\d{1,15}$/.test(invocationId.trim())) {
      throw new InvalidArgumentError("invocation_id", "must be the invocation_id InvokeSkill returned (digits)");
    }
    if (note.length > 2_000) throw new InvalidArgumentError("note", "is longer than 2000 characters");
    const id = Number(invocationId.trim());
    const invocation = this.options.registry.invocation(id);
    if (!invocation || invocation.name !== name || (!context.caller.admin && invocation.caller !== context.caller.agentId)) {
      throw new NotFoundError(`"${name}" has no invocation ${invocationId} of yours`);
    }
    const after = this.options.registry.recordExplicitOutcome(id, success, note, context.caller.agentId, this.now());
    await this.options.skills.noteStatusChange(before, after);
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

export interface ParsedCall {
  readonly tool: string;
  readonly args: unknown;
}

function validateSession(sessionKey: string, calls: readonly ToolCallInput[]): ParsedCall[] {
  if (sessionKey.trim() === "" || sessionKey.length > SESSION_LIMITS.keyChars) {
    throw new InvalidArgumentError("session_key", `is required, at most ${SESSION_LIMITS.keyChars} characters`);
  }
  if (calls.length > SESSION_LIMITS.toolCalls) {
    throw new InvalidArgumentError("tool_calls", `has ${calls.length} calls; at most ${SESSION_LIMITS.toolCalls} per session`);
  }
  return calls.map((call, index) => {
    const tool = call.tool.trim();
    if (tool === "" || tool.length > SESSION_LIMITS.toolChars) {
      throw new InvalidArgumentError(`tool_calls[${index}].tool`, `is required, at most ${SESSION_LIMITS.toolChars} characters`);
    }
    if (call.arguments.length > SESSION_LIMITS.argumentChars) {
      throw new InvalidArgumentError(`tool_calls[${index}].arguments`, `is longer than ${SESSION_LIMITS.argumentChars} characters`);
    }
    let args: unknown = {};
    if (call.arguments.trim() !== "") {
      try {
        args = JSON.parse(call.arguments) as unknown;
      } catch (error) {
        throw new InvalidArgumentError(`tool_calls[${index}].arguments`, `is not JSON: ${errorMessage(error)}`);
      }
    }
    return { tool, args };
  });
}

function argumentsOf(calls: readonly ParsedCall[], window: { start: number; length: number }): unknown[] {
  return calls.slice(window.start, window.start + window.length).map((c) => c.args);
}
