import type { DuplicateScreen, NeighboursOf, SimilarSkillReport, SkillText } from "../control/index.js";
import type { NearDuplicateDetector } from "./near-duplicates.js";

/** The control plane's near-duplicate port over the detector, counting verdicts for the metrics. */
export class NearDuplicateScreen implements DuplicateScreen {
  constructor(
    private readonly detector: NearDuplicateDetector,
    private readonly onVerdict: (verdict: "warned" | "rejected") => void = () => undefined,
  ) {}

  screen(skill: SkillText, neighbours: NeighboursOf, codeOf: (name: string) => Promise<string>): Promise<SimilarSkillReport[]> {
    return this.detector.compare(skill, neighbours, codeOf);
  }

  anticipate(description: string): void {
    this.detector.anticipate(description);
  }

  recordVerdict(verdict: "warned" | "rejected"): void {
    this.onVerdict(verdict);
  }
}
