import { randomUUID } from "node:crypto";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { errorMessage, RunCancelledError } from "../errors/index.js";
import { runCold } from "./cold-run.js";
import { LABEL_BOOT, LABEL_INSTANCE, LABEL_MANAGED } from "./container-spec.js";
import { DockerEngineClient } from "./docker-engine-client.js";
import type { RunStrategyContext } from "./run-context.js";
import { RunDirectories } from "./run-directories.js";
import { RunQueue } from "./run-queue.js";
import { type ContainerFactory, destroyContainer, prepareContainer, type SandboxContainer } from "./sandbox-container.js";
import type { EngineHealth, ExecutionResult, SandboxLimits, SandboxRunner, SandboxRunRequest } from "./sandbox-runner.js";
import { WarmPool } from "./warm-pool.js";
import { runWarm } from "./warm-run.js";

export interface DockerSandboxRunnerOptions {
  readonly docker: Docker;
  readonly logger: Logger;
  readonly image: string;
  /** OCI runtime (`runc` by default, `runsc` for gVisor); undefined uses the engine's default. */
  readonly runtime: string | undefined;
  readonly sandboxDir: string;
  /**
   * Identifies this service's home directory. It labels containers and prefixes run ids, so
   * reaping after a crash never touches another instance sharing the engine.
   */
  readonly instanceTag: string;
  readonly limits: SandboxLimits;
  readonly maxConcurrentRuns: number;
  readonly maxQueuedRuns: number;
  /** Containers kept started and waiting for one job each; 0 turns the warm pool off. */
  readonly warmPoolSize: number;
  /** An idle warm container older than this is replaced. */
  readonly warmIdleMs: number;
  /** Told about every finished run (for metrics); must not throw. */
  readonly onRunFinished?: (result: ExecutionResult, path: "warm" | "cold", purpose: string) => void;
}

/**
 * Runs each job in a fresh, hardened container that only sees its own run directory, and
 * removes the container and the directory on every path out (success, failure, timeout,
 * cancellation, shutdown). With the warm pool on, the container was created and started ahead of
 * time and has waited for this one job (warm-run.ts); otherwise, or when the pool is empty, it
 * is started cold (cold-run.ts). This class only orchestrates: queue, pool, strategy, clean-up.
 */
export class DockerSandboxRunner implements SandboxRunner {
  private readonly engine: DockerEngineClient;
  private readonly runDirectories: RunDirectories;
  private readonly queue: RunQueue;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Prefix of this process's run ids and value of its boot label, so reaping never hits its own runs. */
  private readonly bootId = randomUUID().slice(0, 8);
  private readonly containers: ContainerFactory;
  private readonly strategies: RunStrategyContext;
  private readonly pool: WarmPool<SandboxContainer> | undefined;

  constructor(private readonly options: DockerSandboxRunnerOptions) {
    const { logger } = options;
    this.engine = new DockerEngineClient(options.docker, options.image, logger);
    this.runDirectories = new RunDirectories(options.sandboxDir);
    this.queue = new RunQueue(options.maxConcurrentRuns, options.maxQueuedRuns);
    this.containers = {
      engine: this.engine,
      runDirectories: this.runDirectories,
      image: options.image,
      runtime: options.runtime,
      limits: options.limits,
      instanceTag: options.instanceTag,
      bootId: this.bootId,
      logger,
    };
    this.strategies = {
      image: options.image,
      limits: options.limits,
      runDirectories: this.runDirectories,
      logger,
      prepareCold: (request) =>
        prepareContainer(
          this.containers,
          this.newRunId(),
          { kind: "cold", skillName: request.skillName, purpose: request.purpose, payload: request.payload },
          request.code,
          request.files,
        ),
      destroy: (member) => this.destroy(member),
      destroyLater: (member) => {
        // Tracked so that shutdown still waits for it.
        void this.track(this.destroy(member));
      },
    };
    this.pool =
      options.warmPoolSize > 0
        ? new WarmPool<SandboxContainer>({
            size: options.warmPoolSize,
            idleMs: options.warmIdleMs,
            create: () => prepareContainer(this.containers, this.newRunId(), { kind: "warm" }),
            discard: (member) => this.destroy(member),
            logger: logger.child({ component: "warm-pool" }),
          })
        : undefined;
  }

  /** Containers waiting in the warm pool (for metrics and tests). */
  get warmIdle(): number {
    return this.pool?.idleCount ?? 0;
  }

  /** Runs waiting for a slot, and runs executing (for metrics). */
  get queueDepth(): number {
    return this.queue.waiting;
  }

  get runningRuns(): number {
    return this.queue.running;
  }

  /** Starts filling the warm pool; call once the engine answers. */
  startPool(): void {
    this.pool?.start();
  }

  async run(request: SandboxRunRequest): Promise<ExecutionResult> {
    if (this.shutdown.signal.aborted) throw new RunCancelledError("shutdown");
    const signal = request.signal ? AbortSignal.any([request.signal, this.shutdown.signal]) : this.shutdown.signal;
    return this.queue.submit(() => this.track(this.execute(request, signal)), signal);
  }

  async health(): Promise<EngineHealth> {
    try {
      await this.engine.ping();
      await this.engine.inspectImage();
    } catch (error) {
      return { ready: false, detail: errorMessage(error) };
    }
    return { ready: true, detail: "ok" };
  }

  async reapOrphans(): Promise<{ containers: number; runDirectories: number }> {
    const { instanceTag, logger } = this.options;
    const managed = await this.engine.listContainers([`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${instanceTag}`]);
    let containers = 0;
    for (const orphan of managed) {
      if (orphan.labels[LABEL_BOOT] === this.bootId) continue;
      logger.info({ containerId: orphan.id, labels: orphan.labels }, "removing orphaned sandbox container");
      await this.engine.removeContainer(orphan.id);
      containers++;
    }
    const ours = `${instanceTag}-${this.bootId}-`;
    const leftovers = (await this.runDirectories.list(`${instanceTag}-`)).filter((runId) => !runId.startsWith(ours));
    for (const runId of leftovers) await this.runDirectories.remove(runId);
    return { containers, runDirectories: leftovers.length };
  }

  async wipe(): Promise<{ removedRunDirectories: number }> {
    const removedRunDirectories = await this.runDirectories.wipe();
    this.options.logger.warn({ removedRunDirectories }, "sandbox directory wiped");
    return { removedRunDirectories };
  }

  async close(): Promise<void> {
    this.shutdown.abort(new RunCancelledError("shutdown"));
    await this.pool?.close();
    await Promise.allSettled([...this.inFlight]);
    await this.queue.drain();
    // Removals scheduled by the last runs.
    await Promise.allSettled([...this.inFlight]);
  }

  /** A warm container when the pool has one that is still usable, else a cold start. */
  private async execute(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    const warm = this.pool?.take();
    if (warm) {
      const result = await runWarm(warm, request, signal, this.strategies);
      if (result) return this.finished(result, "warm", request);
    }
    return this.finished(await runCold(request, signal, this.strategies), "cold", request);
  }

  private finished(result: ExecutionResult, path: "warm" | "cold", request: SandboxRunRequest): ExecutionResult {
    this.options.onRunFinished?.(result, path, request.purpose);
    return result;
  }

  private newRunId(): string {
    return `${this.options.instanceTag}-${this.bootId}-${randomUUID()}`;
  }

  private async track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  private destroy(member: SandboxContainer): Promise<void> {
    return destroyContainer(member, this.runDirectories, this.options.logger);
  }
}
