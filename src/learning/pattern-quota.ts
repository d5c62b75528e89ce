import type { LearningDeps } from "./learning-deps.js";
import type { SliceGate } from "./slices.js";

/** Patterns removed for the quota in one transaction (docs/learning.md#large-sessions). */
const EVICT_SLICE = 1_000;

/**
 * The agents' pattern quota (docs/learning.md#pattern-quota): past it, the oldest and least frequent
 * patterns go, a bounded transaction at a time.
 */
export class PatternQuota {
  /**
   * Per agent, an upper bound of its stored patterns: its count when last counted plus every pattern
   * added since, so the quota is counted (an index scan) only when the bound passes it.
   */
  private readonly patternBound = new Map<string, number>();

  constructor(
    private readonly deps: Pick<LearningDeps, "store" | "policy" | "logger">,
    private readonly slices: SliceGate,
  ) {}

  /**
   * Brings the agent back within its quota. Not stopped by the call's cancellation: it is the
   * service's housekeeping, and what is left over goes at the agent's next session.
   */
  async keep(agent: string): Promise<void> {
    const { store, policy } = this.deps;
    const bound = this.patternBound.get(agent);
    if (bound !== undefined && bound <= policy.maxPatternsPerAgent) return;
    for (;;) {
      await this.slices.turn();
      const { removed, left, more } = store.transaction("keep the pattern quota", () => {
        const count = store.patternCount(agent);
        const excess = count - policy.maxPatternsPerAgent;
        if (excess <= 0) return { removed: 0, left: count, more: false };
        const n = store.evictPatterns(agent, Math.min(excess, EVICT_SLICE));
        return { removed: n, left: count - n, more: excess > EVICT_SLICE && n > 0 };
      });
      if (removed > 0) this.deps.logger.debug({ agent, removed }, "patterns over the agent's quota removed");
      if (!more) {
        // Exact as of this transaction; patterns other recordings add from now on are added to it.
        this.patternBound.set(agent, left);
        return;
      }
    }
  }

  /** Committed new patterns of an agent raise its bound (an agent not counted yet is counted at its next check). */
  noteAdded(agent: string, added: number): void {
    const bound = this.patternBound.get(agent);
    if (bound !== undefined && added > 0) this.patternBound.set(agent, bound + added);
  }
}
