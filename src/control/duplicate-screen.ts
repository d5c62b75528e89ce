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

export interface SkillText {
  readonly name: string;
  readonly description: string;
  readonly code: string;
}

export interface DuplicateScreen {
  /** The skills among `others` that resemble `skill`, most similar first. */
  screen(skill: SkillText, others: readonly SkillText[]): Promise<SimilarSkillReport[]>;
  /** Counts a verdict (metrics). */
  recordVerdict?(verdict: "warned" | "rejected"): void;
}
