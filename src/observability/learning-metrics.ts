import { Counter, Gauge, type Registry } from "prom-client";

/**
 * Learning's metrics (docs/learning.md#metrics): candidates by status (read at scrape time),
 * promotions, evolutions, and near-duplicate warnings and rejections.
 */
export class LearningMetrics {
  private readonly promotions: Counter;
  private readonly evolutions: Counter;
  private readonly duplicates: Counter<"verdict">;
  private counts: (() => Record<string, number>) | undefined;

  constructor(registry: Registry) {
    const counts = () => this.counts?.() ?? {};
    new Gauge({
      name: "skill_engine_skill_candidates",
      help: "Skill candidates from repeated tool sequences, by status (candidate, promoted, dismissed).",
      labelNames: ["status"],
      registers: [registry],
      collect() {
        this.reset();
        for (const [status, n] of Object.entries(counts())) this.set({ status }, n);
      },
    });
    this.promotions = new Counter({
      name: "skill_engine_candidate_promotions_total",
      help: "Candidates promoted into new auto-created skills.",
      registers: [registry],
    });
    this.evolutions = new Counter({
      name: "skill_engine_skill_evolutions_total",
      help: "Auto-created skills updated by a promoted candidate (evolution) instead of duplicated.",
      registers: [registry],
    });
    this.duplicates = new Counter({
      name: "skill_engine_near_duplicates_total",
      help: "Registrations that resembled a visible skill past the near-duplicate thresholds, by verdict (warned, rejected).",
      labelNames: ["verdict"],
      registers: [registry],
    });
  }

  attach(counts: () => Record<string, number>): void {
    this.counts = counts;
  }

  promoted(evolved: boolean): void {
    (evolved ? this.evolutions : this.promotions).inc();
  }

  nearDuplicate(verdict: "warned" | "rejected"): void {
    this.duplicates.inc({ verdict });
  }
}
