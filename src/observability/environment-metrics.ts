import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/**
 * Environments of packages in Prometheus (docs/packages.md#metrics): builds by result, their
 * seconds by what they installed from, failures by reason, and the bytes of every ready
 * environment. Its three methods are the environments' event hooks (`EnvironmentEvents`).
 */
export class EnvironmentMetrics {
  private readonly builds: Counter<"result">;
  private readonly buildSeconds: Histogram<"from">;
  private readonly failures: Counter<"reason">;
  private readonly totalBytes: Gauge;

  constructor(registry: Registry) {
    this.builds = new Counter({
      name: "skill_engine_environment_builds_total",
      help: "Environment builds (new sets and rebuilds from locks) by result (built, failed).",
      labelNames: ["result"],
      registers: [registry],
    });
    this.buildSeconds = new Histogram({
      name: "skill_engine_environment_build_duration_seconds",
      help: "Time a successful environment build took, installers included, by what it installed from (declarations, lock).",
      labelNames: ["from"],
      buckets: [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    });
    this.failures = new Counter({
      name: "skill_engine_environment_build_failures_total",
      help: "Failed environment builds by reason (not-configured, not-found, source-only, conflict, hash-mismatch, timeout, too-large, installer, internal).",
      labelNames: ["reason"],
      registers: [registry],
    });
    this.totalBytes = new Gauge({
      name: "skill_engine_environment_bytes",
      help: "Bytes of every ready environment under SKILL_ENGINE_HOME/environments.",
      registers: [registry],
    });
    // Present from the first scrape, so a rate over them starts at zero rather than at the first build.
    this.builds.inc({ result: "built" }, 0);
    this.builds.inc({ result: "failed" }, 0);
  }

  built(seconds: number, from: "declarations" | "lock"): void {
    this.builds.inc({ result: "built" });
    this.buildSeconds.observe({ from }, seconds);
  }

  failed(reason: string): void {
    this.builds.inc({ result: "failed" });
    this.failures.inc({ reason });
  }

  bytes(total: number): void {
    this.totalBytes.set(total);
  }
}
