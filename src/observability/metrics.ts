import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/** A file a run was handed or gave back, as the file counters read it. */
export interface RunFile {
  readonly content: Uint8Array;
}

/** Every direction and purpose present from the first scrape, so a rate over them starts at zero. */
function zeroed(counter: Counter<"direction" | "purpose">): Counter<"direction" | "purpose"> {
  for (const direction of ["in", "out"]) for (const purpose of ["test", "invoke"]) counter.inc({ direction, purpose }, 0);
  return counter;
}

/** What a finished sandbox run is counted as. */
export type RunOutcome = "success" | "failure" | "timeout" | "oom";

/** Live figures the metrics read at scrape time. */
export interface MetricsSources {
  readonly queueDepth: () => number;
  readonly runningRuns: () => number;
  readonly warmIdle: () => number;
  /** Finished runs' containers not removed yet (docs/performance.md#container-removal). */
  readonly awaitingRemoval?: () => number;
  readonly skillsByStatus: () => Record<string, number>;
  /** The execution hosts heard from lately, when runs go over the bus (docs/execution-hosts.md#metrics). */
  readonly runners?: () => ReadonlyArray<{
    readonly runner: string;
    readonly slots: number;
    readonly busy: number;
    readonly warmIdle: number;
    readonly engineReady: boolean;
    readonly stopping: boolean;
  }>;
}

/**
 * The service's Prometheus metrics (prom-client), in one registry of their own so tests and
 * several instances in one process do not collide.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly rpcs: Counter<"method" | "code">;
  private readonly rpcSeconds: Histogram<"method">;
  private readonly runs: Counter<"outcome" | "path" | "purpose">;
  private readonly runSeconds: Histogram<"path">;
  private readonly infrastructureFaults: Counter<"fault" | "purpose">;
  private sources: MetricsSources | undefined;

  constructor() {
    // Process figures (resident memory, CPU, event-loop lag, handles) beside the service's own.
    collectDefaultMetrics({ register: this.registry });
    this.rpcs = new Counter({
      name: "skill_engine_rpc_requests_total",
      help: "gRPC calls by method and status code.",
      labelNames: ["method", "code"],
      registers: [this.registry],
    });
    this.rpcSeconds = new Histogram({
      name: "skill_engine_rpc_duration_seconds",
      help: "gRPC call latency by method.",
      labelNames: ["method"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [this.registry],
    });
    this.runs = new Counter({
      name: "skill_engine_sandbox_runs_total",
      help: "Sandbox runs by outcome, path (warm or cold) and purpose (test or invoke).",
      labelNames: ["outcome", "path", "purpose"],
      registers: [this.registry],
    });
    this.runSeconds = new Histogram({
      name: "skill_engine_sandbox_run_duration_seconds",
      help: "Time from start (or hand-over to a warm container) to the end of the skill.",
      labelNames: ["path"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
    this.infrastructureFaults = new Counter({
      name: "skill_engine_sandbox_infrastructure_faults_total",
      help: "Runs the infrastructure cut short (engine away, container lost, sandbox wiped, host disk full), by fault and purpose; never counted against a skill.",
      labelNames: ["fault", "purpose"],
      registers: [this.registry],
    });
    const read = (pick: (s: MetricsSources) => number) => () => (this.sources ? pick(this.sources) : 0);
    new Gauge({
      name: "skill_engine_run_queue_depth",
      help: "Runs waiting for a sandbox slot.",
      registers: [this.registry],
      collect() {
        this.set(read((s) => s.queueDepth())());
      },
    });
    new Gauge({
      name: "skill_engine_runs_in_flight",
      help: "Sandbox runs executing now.",
      registers: [this.registry],
      collect() {
        this.set(read((s) => s.runningRuns())());
      },
    });
    new Gauge({
      name: "skill_engine_warm_pool_idle",
      help: "Warm containers waiting for a job.",
      registers: [this.registry],
      collect() {
        this.set(read((s) => s.warmIdle())());
      },
    });
    new Gauge({
      name: "skill_engine_containers_awaiting_removal",
      help: "Finished runs' containers not removed yet (removal runs in the background).",
      registers: [this.registry],
      collect() {
        this.set(read((s) => s.awaitingRemoval?.() ?? 0)());
      },
    });
    const sources = () => this.sources;
    new Gauge({
      name: "skill_engine_runner_slots",
      help: "Slots of each execution host heard from lately (runs over the bus), busy or free; a runner whose engine is away or that is stopping has no free slot.",
      labelNames: ["runner", "state"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const status of sources()?.runners?.() ?? []) {
          const serving = status.engineReady && !status.stopping;
          this.set({ runner: status.runner, state: "busy" }, status.busy);
          this.set({ runner: status.runner, state: "free" }, serving ? Math.max(0, status.slots - status.busy) : 0);
        }
      },
    });
    new Gauge({
      name: "skill_engine_skills",
      help: "Registered skills by status.",
      labelNames: ["status"],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [status, count] of Object.entries(sources()?.skillsByStatus() ?? {})) this.set({ status }, count);
      },
    });
  }

  /** Connects the gauges to the running service. */
  attach(sources: MetricsSources): void {
    this.sources = sources;
  }

  recordRpc(method: string, code: string, seconds: number): void {
    this.rpcs.inc({ method, code });
    this.rpcSeconds.observe({ method }, seconds);
  }

  /** `path` is "runner" for a run a runner executed (its own metrics say whether warm or cold: docs/execution-hosts.md#metrics). */
  recordRun(outcome: RunOutcome, path: "warm" | "cold" | "runner", purpose: string, seconds: number): void {
    this.runs.inc({ outcome, path, purpose });
    this.runSeconds.observe({ path }, seconds);
  }

  /**
   * A call a delegating agent made for an end user (docs/security.md#users-and-delegation), by method
   * only. Label values stay bounded: a delegate names any user id it likes, so who the call was for
   * goes to the call's log line (`agent`, `user`), never into a label.
   */
  recordDelegatedCall(method: string): void {
    this.delegatedCalls.inc({ method });
  }

  private readonly delegatedCalls = new Counter({
    name: "skill_engine_delegated_calls_total",
    help: "Calls made by delegating agents on behalf of end users (x-user-id), by method; the rpc log line names the agent and the user.",
    labelNames: ["method"],
    registers: [this.registry],
  });

  /** Qdrant stopped serving routes, by reason (unreachable, unauthorized, missing …; docs/routing.md#qdrant). */
  recordVectorIndexUnavailable(reason: string): void {
    this.vectorIndexUnavailable.inc({ reason });
  }

  private readonly vectorIndexUnavailable = new Counter({
    name: "skill_engine_vector_index_unavailable_total",
    help: "Times the scale-out vector index (Qdrant) stopped serving routes, by reason; routing used the embedded index meanwhile.",
    labelNames: ["reason"],
    registers: [this.registry],
  });

  /**
   * The files a finished run was handed and gave back (docs/files.md), by direction and purpose: "in"
   * counts the input files' bytes, "out" the bytes returned inline (a truncated file counts what came
   * back, not its whole size; skipped entries count nothing).
   */
  recordRunFiles(purpose: string, inputFiles: readonly RunFile[], outputFiles: readonly RunFile[]): void {
    for (const [direction, files] of [
      ["in", inputFiles],
      ["out", outputFiles],
    ] as const) {
      if (files.length === 0) continue;
      this.runFiles.inc({ direction, purpose }, files.length);
      this.runFileBytes.inc(
        { direction, purpose },
        files.reduce((sum, file) => sum + file.content.byteLength, 0),
      );
    }
  }

  private readonly runFiles = zeroed(
    new Counter({
      name: "skill_engine_run_files_total",
      help: "Files handed to sandbox runs (direction in) and returned by them (out), by purpose.",
      labelNames: ["direction", "purpose"],
      registers: [this.registry],
    }),
  );

  private readonly runFileBytes = zeroed(
    new Counter({
      name: "skill_engine_run_file_bytes_total",
      help: "Bytes of the files handed to sandbox runs (direction in) and returned inline by them (out), by purpose.",
      labelNames: ["direction", "purpose"],
      registers: [this.registry],
    }),
  );

  /**
   * One connection through a run's egress gateway once it ended (docs/security.md#egress): its verdict
   * (allowed, refused) and the bytes it moved each way. No host label: hosts are the skills' choice and
   * unbounded; the log line names them.
   */
  recordEgress(connection: { readonly verdict: "allowed" | "refused"; readonly bytesOut: number; readonly bytesIn: number }): void {
    this.egressConnections.inc({ verdict: connection.verdict });
    if (connection.bytesOut > 0) this.egressBytes.inc({ direction: "out" }, connection.bytesOut);
    if (connection.bytesIn > 0) this.egressBytes.inc({ direction: "in" }, connection.bytesIn);
  }

  private readonly egressConnections = new Counter({
    name: "skill_engine_egress_connections_total",
    help: "Connections through runs' egress gateways, by verdict (allowed, refused).",
    labelNames: ["verdict"],
    registers: [this.registry],
  });

  private readonly egressBytes = new Counter({
    name: "skill_engine_egress_bytes_total",
    help: "Bytes moved through runs' egress gateways, out to hosts and in from them.",
    labelNames: ["direction"],
    registers: [this.registry],
  });

  /** A run the infrastructure cut short: counted apart from the skills' own outcomes. */
  recordInfrastructureFault(fault: string, purpose: string): void {
    this.infrastructureFaults.inc({ fault, purpose });
  }
}
