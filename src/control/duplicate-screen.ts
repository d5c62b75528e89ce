/**
 * Port: near-duplicates at the door (docs/learning.md#near-duplicates). The control plane asks it
 * for the skills that resemble a new one; the learning concern implements it.
 */

/** What a registration does with a near-duplicate: register and report it, or refuse. */
export type OnDuplicate = "warn" | "reject";

export interface SimilarSkillReport {
  readonly name: string;
  readonly descriptionSimilarity: number;
  readonly codeSimilarity: number;
  readonly nearDuplicate: boolean;
}

export interface SkillText extends DescribedSkill {
  readonly code: string;
}

/** A skill a new one is compared with: its code is read only if its description comes close. */
export interface DescribedSkill {
  readonly name: string;
  readonly description: string;
}

/**
 * The skills a new one is compared with: at most `limit` of those the caller may see, nearest first
 * to the new description's vector (found through routing's vector index), or every visible skill
 * where no index is wired. The new skill itself is never among them.
 */
export type NeighboursOf = (descriptionVector: Float32Array, limit: number) => Promise<readonly DescribedSkill[]>;

export interface DuplicateScreen {
  /**
   * The skills among `neighbours` that resemble `skill`, most similar first. `codeOf` is called
   * only for the few whose description is close enough to be reported (never for the whole library).
   */
  screen(skill: SkillText, neighbours: NeighboursOf, codeOf: (name: string) => Promise<string>): Promise<SimilarSkillReport[]>;
  /**
   * Starts what needs only the new skill's description (its embedding: the slow part, a model run),
   * so that the screen that follows finds it done; never throws (a failure shows in the screen).
   */
  anticipate?(description: string): void;
  /** Counts a verdict (metrics). */
  recordVerdict?(verdict: "warned" | "rejected"): void;
}
