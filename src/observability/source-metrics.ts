import { Gauge, type Registry } from "prom-client";

/**
 * Skill folders in Prometheus (docs/skill-sources.md#metrics): the folders of the last scan by
 * configured directory (`source`; "bundle" for imports is not a folder) and status.
 */
export class SourceMetrics {
  private read: () => Array<{ source: string; status: string; count: number }> = () => [];

  constructor(registry: Registry) {
    const read = () => this.read();
    new Gauge({
      name: "skill_engine_skill_folders",
      help: "Skill folders found by the last scan of SKILL_ENGINE_SKILL_DIRS, by directory and status (discovered, ready, blocked, failed, shadowed).",
      labelNames: ["source", "status"],
      registers: [registry],
      collect() {
        this.reset();
        for (const { source, status, count } of read()) this.set({ source, status }, count);
      },
    });
  }

  attach(read: () => Array<{ source: string; status: string; count: number }>): void {
    this.read = read;
  }
}
