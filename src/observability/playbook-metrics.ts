import { Counter, Gauge, type Registry } from "prom-client";

/** One row of the lessons gauge. */
export interface LessonCount {
  readonly owner: string;
  readonly state: string;
  readonly n: number;
}

/**
 * The playbook's metrics, in the service's registry: lessons by state (read at scrape time), and
 * counters of retrievals, helpful credits and pruned lessons. Its three methods are the playbook's
 * event hooks. No agent label: identities belong in logs and in ListLessons, and label values stay
 * bounded (docs/operations.md#metrics).
 */
export class PlaybookMetrics {
  private readonly retrievals: Counter;
  private readonly credits: Counter;
  private readonly prunes: Counter;
  private counts: (() => readonly LessonCount[]) | undefined;

  constructor(registry: Registry) {
    const counts = () => this.counts?.() ?? [];
    new Gauge({
      name: "skill_engine_lessons",
      help: "Playbook lessons by state (active, archived, deleted), every agent's together.",
      labelNames: ["state"],
      registers: [registry],
      collect() {
        this.reset();
        const byState = new Map<string, number>();
        for (const { state, n } of counts()) byState.set(state, (byState.get(state) ?? 0) + n);
        for (const [state, n] of byState) this.set({ state }, n);
      },
    });
    this.retrievals = new Counter({
      name: "skill_engine_lesson_retrievals_total",
      help: "Lessons shown in playbook contexts.",
      registers: [registry],
    });
    this.credits = new Counter({
      name: "skill_engine_lesson_helpful_credits_total",
      help: "Lesson showings credited as helpful.",
      registers: [registry],
    });
    this.prunes = new Counter({
      name: "skill_engine_lessons_pruned_total",
      help: "Lessons archived by PruneLessons or the prune sweep.",
      registers: [registry],
    });
  }

  /** Connects the gauge to the running playbook. */
  attach(counts: () => readonly LessonCount[]): void {
    this.counts = counts;
  }

  retrieved(count: number): void {
    this.retrievals.inc(count);
  }

  credited(count: number): void {
    this.credits.inc(count);
  }

  pruned(count: number): void {
    this.prunes.inc(count);
  }
}
