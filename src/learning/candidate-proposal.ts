import type { LearningDeps } from "./learning-deps.js";
import type { CandidateRecord } from "./learning-store.js";
import { type CountedWindow, derivedSkillName, mechanicalDescription, selectCandidateWindows, type SequenceStep } from "./sequence.js";
import type { ParsedCall } from "./session-input.js";

/** One recorded session, as candidates are proposed from it. */
export interface ProposalInput {
  readonly agent: string;
  readonly parsed: readonly ParsedCall[];
  readonly steps: readonly SequenceStep[];
  /** The session's windows seen in enough sessions that no candidate of the agent holds yet. */
  readonly uncovered: readonly CountedWindow[];
  readonly at: string;
}

/**
 * Chooses and inserts the new candidates of a session (docs/learning.md#which-windows-count and
 * docs/learning.md#candidates). Runs inside the recording's transaction.
 */
export function proposeCandidates(input: ProposalInput, deps: Pick<LearningDeps, "store" | "policy">): CandidateRecord[] {
  const { store, policy } = deps;
  const { agent, parsed, steps, uncovered, at } = input;
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
  return created;
}

/** The arguments of a window's calls: a candidate's examples, from which its promotion plans parameters. */
export function argumentsOf(calls: readonly ParsedCall[], window: { start: number; length: number }): unknown[] {
  return calls.slice(window.start, window.start + window.length).map((c) => c.args);
}
