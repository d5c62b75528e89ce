import { anySignal } from "any-signal";
import { randomUUID } from "node:crypto";
import { setMaxListeners } from "node:events";
import { stat } from "node:fs/promises";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { afterReply } from "../../reply-scope/index.js";
import { errorMessage, type InfrastructureFault, RunCancelledError, SandboxUnavailableError } from "../../errors/index.js";
import { runCold } from "./cold-run.js";
import { type ContainerCommand, LABEL_INSTANCE, LABEL_MANAGED, LABEL_RUN_ID } from "./container-spec.js";
import { DockerEngineClient } from "./docker-engine-client.js";
import { EngineWatch } from "./engine-watch.js";
import { EnvironmentPools } from "./environment-pools.js";
import type { RunStrategyContext } from "./run-context.js";
import { RunDirectories } from "./run-directories.js";
import { RemovalQueue } from "./removal-queue.js";
import { RunQueue } from "./run-queue.js";
import { type ContainerFactory, destroyContainer, prepareContainer, type SandboxContainer } from "./sandbox-container.js";
import type { EgressSettings } from "./run-egress.js";
import type {
  EngineHealth,
  ExecutionPlane,
  ExecutionResult,
  RunInputFile,
  SandboxEnvironment,
  SandboxFile,
  SandboxFolderFile,
  SandboxLimits,
  SandboxRunRequest,
} from "../sandbox-runner.js";
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
  /** Runs one agent may have waiting (docs/security.md#fair-share-of-the-run-queue). */
  readonly maxQueuedRunsPerAgent: number;
  /** Agents given their own number of waiting runs in place of `maxQueuedRunsPerAgent`. */
  readonly maxQueuedRunsByAgent?: ReadonlyMap<string, number>;
  /** Containers kept started and waiting for one job each; 0 turns the warm pool off. */
  readonly warmPoolSize: number;
  /** An idle warm container older than this is replaced. */
  readonly warmIdleMs: number;
  /**
   * Environments of packages with a warm pool of their own at once, the least recently used removed
   * first; 0, or a plain pool of 0, turns them off (docs/packages.md#warm-containers-of-an-environment).
   */
  readonly environmentPools?: number;
  /** Containers each environment's pool keeps waiting. */
  readonly environmentPoolSize?: number;
  /**
   * The warm pool stops refilling while this many runs execute (the host is saturated: a refill
   * would only compete with them for the engine), and resumes as they finish; 0 never pauses
   * (docs/performance.md#pool-refills-pause-under-load).
   */
  readonly poolPauseAtRuns: number;
  /** Finished runs' containers removed at once in the background (docs/performance.md#container-removal). */
  readonly removalWorkers: number;
  /** Finished runs' containers waiting for removal at most; a run beyond that waits for room. */
  readonly maxAwaitingRemoval: number;
  /** Told about every finished run, with the files it was handed (for metrics); must not throw. */
  readonly onRunFinished?: (result: ExecutionResult, path: "warm" | "cold", purpose: string, inputFiles: readonly RunInputFile[]) => void;
  /** Told about every run the infrastructure cut short (for metrics); must not throw. */
  readonly onInfrastructureFault?: (fault: InfrastructureFault, purpose: string) => void;
  /** The way out for runs that declared hosts (docs/security.md#egress); absent: such runs are refused. */
  readonly egress?: EgressSettings;
}

/** Slack on top of a container's longest legitimate life before the sweep calls it leaked. */
const LEAK_GRACE_MS = 60_000;
/** How long a removal waits for a finished run's container to stop by itself before forcing it. */
const EXIT_BEFORE_REMOVAL_MS = 1_000;

/**
 * Runs each job in a fresh, hardened container that only sees its own run directory, and
 * removes the container and the directory on every path out (success, failure, timeout,
 * cancellation, shutdown). With the warm pool on, the container was created and started ahead of
 * time and has waited for this one job (warm-run.ts); otherwise, or when the pool is empty, it
 * is started cold (cold-run.ts). This class only orchestrates: queue, pool, strategy, clean-up.
 */
export class DockerSandboxRunner implements ExecutionPlane {
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
  /** Warm containers of environments, each serving its own environment's runs only. */
  private readonly environmentPools: EnvironmentPools<SandboxContainer> | undefined;
  /** Which directory each environment pool's container mounted: the identity of its environment's directory then. */
  private readonly mountedEnvironments = new WeakMap<SandboxContainer, string>();
  /** Idle containers discarded through the removal queue: they never ran a job, so nothing will stop them first. */
  private readonly neverRan = new WeakSet<SandboxContainer>();
  private readonly watch: EngineWatch;
  /** Run ids of this process whose container and directory may exist, from before creation until after removal. */
  private readonly tracked = new Set<string>();
  /** Finished runs' containers, removed in the background; each stays tracked until it is gone. */
  private readonly removals: RemovalQueue<SandboxContainer>;
  /** Set by a failed probe or a run that could not reach the engine; cleared once it answers again. */
  private engineAway = false;

  constructor(private readonly options: DockerSandboxRunnerOptions) {
    const { logger } = options;
    // Every run in flight listens to the shutdown signal (and stops when it ends): as many
    // listeners as runs, not a leak, so no MaxListenersExceededWarning past ten.
    setMaxListeners(0, this.shutdown.signal);
    this.engine = new DockerEngineClient(options.docker, options.image, logger);
    this.runDirectories = new RunDirectories(options.sandboxDir);
    this.watch = new EngineWatch(this.engine, this.instanceLabels(), logger.child({ component: "engine-watch" }));
    this.queue = new RunQueue({
      concurrency: options.maxConcurrentRuns,
      maxQueued: options.maxQueuedRuns,
      maxQueuedPerAgent: options.maxQueuedRunsPerAgent,
      ...(options.maxQueuedRunsByAgent ? { maxQueuedByAgent: options.maxQueuedRunsByAgent } : {}),
    });
    this.containers = {
      engine: this.engine,
      runDirectories: this.runDirectories,
      image: options.image,
      runtime: options.runtime,
      limits: options.limits,
      instanceTag: options.instanceTag,
      bootId: this.bootId,
      watch: this.watch,
      logger,
    };
    this.strategies = {
      image: options.image,
      limits: options.limits,
      runDirectories: this.runDirectories,
      logger,
      faults: { engine: this.engine, watch: this.watch },
      ...(options.egress ? { egress: options.egress } : {}),
      prepareCold: (request) =>
        this.prepare(
          {
            kind: "cold",
            skillName: request.skillName,
            purpose: request.purpose,
            ...(request.environment ? { environment: request.environment } : {}),
          },
          request.code,
          request.files,
          request.folder,
          request.inputFiles,
        ),
      destroyLater: (member) => this.removals.enqueue(member),
    };
    this.removals = new RemovalQueue<SandboxContainer>({
      remove: (member) => this.destroyOnceStopped(member),
      workers: options.removalWorkers,
      maxWaiting: options.maxAwaitingRemoval,
      onRemoved: () => {
        this.pool?.resume();
        this.environmentPools?.resume();
      },
    });
    this.pool =
      options.warmPoolSize > 0
        ? new WarmPool<SandboxContainer>({
            size: options.warmPoolSize,
            idleMs: options.warmIdleMs,
            create: () => this.prepare({ kind: "warm" }),
            discard: (member) => this.destroy(member),
            paused: () => options.poolPauseAtRuns > 0 && this.queue.running >= options.poolPauseAtRuns,
            logger: logger.child({ component: "warm-pool" }),
          })
        : undefined;
    const environmentPools = options.environmentPools ?? 0;
    this.environmentPools =
      options.warmPoolSize > 0 && environmentPools > 0
        ? new EnvironmentPools<SandboxContainer>({
            maxPools: environmentPools,
            size: options.environmentPoolSize ?? 1,
            idleMs: options.warmIdleMs,
            create: (environment) => this.prepareForEnvironment(environment),
            discard: (member) => this.discardIdle(member),
            paused: () => options.poolPauseAtRuns > 0 && this.queue.running >= options.poolPauseAtRuns,
            logger: logger.child({ component: "environment-pools" }),
          })
        : undefined;
  }

  /** Containers waiting in the warm pools, the plain one and every environment's (for metrics and tests). */
  get warmIdle(): number {
    return (this.pool?.idleCount ?? 0) + (this.environmentPools?.idleCount ?? 0);
  }

  /** Runs waiting for a slot, and runs executing (for metrics). */
  get queueDepth(): number {
    return this.queue.waiting;
  }

  get runningRuns(): number {
    return this.queue.running;
  }

  /** Finished runs' containers not removed yet (for metrics and tests). */
  get awaitingRemoval(): number {
    return this.removals.pending;
  }

  /** Starts following the engine's events and filling the warm pool; call once the engine answers. */
  startPool(): void {
    this.watch.start();
    this.pool?.start();
  }

  async run(request: SandboxRunRequest): Promise<ExecutionResult> {
    if (this.shutdown.signal.aborted) throw new RunCancelledError("shutdown");
    // A signal of the run's own, released when it ends: whatever listens to it (the queue leaves a
    // listener and a pending promise behind per task) goes with it. Not AbortSignal.any, which in
    // Node keeps every signal it made reachable from the long-lived shutdown signal
    // (nodejs/node#55351): a few KB per run for the process's lifetime.
    const signal = anySignal([request.signal, this.shutdown.signal]);
    try {
      if (this.engineAway) await this.engineBack();
      return await this.queue.submit(request.agentId, () => this.track(this.execute(request, signal)), signal);
    } catch (error) {
      if (error instanceof SandboxUnavailableError && error.fault === "engine-unreachable") this.engineAway = true;
      if (error instanceof SandboxUnavailableError) this.options.onInfrastructureFault?.(error.fault, request.purpose);
      else if (error instanceof RunCancelledError && error.reason === "shutdown")
        this.options.onInfrastructureFault?.("shutdown", request.purpose);
      throw error;
    } finally {
      signal.clear();
      // A slot is free: a pool that paused its refills for the load, or one this run took from,
      // refills, once the caller has its answer: a container's start-up is CPU-heavy for the engine
      // and would compete with what the caller waits for (docs/performance.md#after-the-reply).
      afterReply(() => {
        this.pool?.resume();
        this.environmentPools?.resume();
      });
    }
  }

  async health(): Promise<EngineHealth> {
    try {
      await this.engine.ping();
      await this.engine.inspectImage();
    } catch (error) {
      this.engineAway = true;
      return { ready: false, detail: errorMessage(error) };
    }
    this.engineAnswers();
    return { ready: true, detail: "ok" };
  }

  /**
   * While the engine is known to be away, a run first asks whether it is back (one ping, bounded):
   * the caller then hears UNAVAILABLE at once instead of queueing for a container that cannot be
   * made, and the first run after the engine's return clears the flag without waiting for the probe.
   */
  private async engineBack(): Promise<void> {
    await this.engine.ping();
    this.engineAnswers();
  }

  /**
   * The engine answers again. Warm containers made before it went away, or while it was going (an
   * engine's stop accepts new containers for seconds), are replaced, never used: their wait and
   * attach streams may belong to the engine process that is gone and never settle, so a job handed
   * to one would hang until the run's time limit (seen in test/engine-restart.docker.test.ts).
   */
  private engineAnswers(): void {
    if (!this.engineAway) return;
    this.engineAway = false;
    this.pool?.replaceIdle("made before the engine went away");
    this.environmentPools?.replaceIdle("made before the engine went away");
  }

  /**
   * Removes every container and run directory of this instance that no run of this process
   * tracks (a crashed process's, or one whose removal failed while the engine was away), and any
   * container of this instance older than the longest life a container can have (a leak).
   * Tracking starts before a container is created and ends after it is removed, so this never
   * touches a run in flight. The service calls it when the engine first answers, every time it
   * answers again after being away, and periodically (docs/security.md#container-lifecycle-and-orphans).
   */
  async reapOrphans(): Promise<{ containers: number; runDirectories: number }> {
    const { instanceTag, logger } = this.options;
    const oldest = Date.now() - this.maxContainerLifeMs();
    let containers = 0;
    for (const found of await this.engine.listContainers(this.instanceLabels())) {
      const runId = found.labels[LABEL_RUN_ID] ?? "";
      const untracked = !this.tracked.has(runId);
      if (!untracked && found.createdAt.getTime() >= oldest) continue;
      if (untracked) logger.info({ containerId: found.id, labels: found.labels }, "removing an untracked sandbox container");
      else
        logger.error(
          { containerId: found.id, runId, createdAt: found.createdAt },
          "removing a sandbox container that outlived every limit",
        );
      await this.engine.removeContainer(found.id);
      containers++;
    }
    const leftovers = (await this.runDirectories.list(`${instanceTag}-`)).filter((runId) => !this.tracked.has(runId));
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
    this.watch.close();
    await this.pool?.close();
    await this.environmentPools?.close();
    await Promise.allSettled([...this.inFlight]);
    await this.queue.drain();
    // Removals scheduled by the last runs: no container of ours is left after a graceful stop.
    await Promise.allSettled([...this.inFlight]);
    await this.removals.drain();
  }

  /**
   * A warm container when the pool has one that is still usable, else a cold start. A run that
   * needs an environment takes from that environment's pool only (docs/packages.md#warm-containers-of-an-environment).
   */
  private async execute(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    const warm = request.environment ? await this.takeForEnvironment(request.environment) : this.pool?.take();
    if (warm) {
      const result = await runWarm(warm, request, signal, this.strategies);
      if (result) return this.finished(result, "warm", request);
    }
    return this.finished(await runCold(request, signal, this.strategies), "cold", request);
  }

  /**
   * A waiting container of `environment`'s pool whose mount is still that environment's directory.
   * A rebuild puts a new directory in its place and a removal deletes it; a container made before
   * keeps the one it mounted, so it is discarded with its pool, and the run starts cold.
   */
  private async takeForEnvironment(environment: SandboxEnvironment): Promise<SandboxContainer | undefined> {
    const member = this.environmentPools?.take(environment);
    if (!member) return undefined;
    const now = await directoryIdentity(environment.hostPath);
    if (now !== undefined && now === this.mountedEnvironments.get(member)) return member;
    this.environmentPools?.remove(environment.id, "its environment's directory was replaced or removed");
    // Asked again, the pools make a new one for the directory there now, filled once this run has answered.
    this.environmentPools?.take(environment);
    await this.discardIdle(member);
    return undefined;
  }

  /** A warm container with `environment` mounted, remembering which directory that was. */
  private async prepareForEnvironment(environment: SandboxEnvironment): Promise<SandboxContainer> {
    // Read before the container exists: a directory replaced meanwhile then reads as changed at the take (safe).
    const identity = await directoryIdentity(environment.hostPath);
    if (identity === undefined) throw new Error(`environment ${environment.id} has no directory at ${environment.hostPath}`);
    const member = await this.prepare({ kind: "warm", environment });
    this.mountedEnvironments.set(member, identity);
    return member;
  }

  /** An environment pool's idle container goes through the removal queue, bounded like a finished run's. */
  private async discardIdle(member: SandboxContainer): Promise<void> {
    this.neverRan.add(member);
    await this.removals.enqueue(member);
  }

  private finished(result: ExecutionResult, path: "warm" | "cold", request: SandboxRunRequest): ExecutionResult {
    this.options.onRunFinished?.(result, path, request.purpose, request.inputFiles ?? []);
    return result;
  }

  /** Prepares a container under a new run id that stays tracked until the container is removed. */
  private async prepare(
    command: ContainerCommand,
    code?: string,
    files?: readonly SandboxFile[],
    folder?: readonly SandboxFolderFile[],
    inputFiles?: readonly RunInputFile[],
  ): Promise<SandboxContainer> {
    const runId = `${this.options.instanceTag}-${this.bootId}-${randomUUID()}`;
    this.tracked.add(runId);
    try {
      return await prepareContainer(this.containers, runId, command, code, files, folder, inputFiles);
    } catch (error) {
      // prepareContainer removed what it made; what it could not remove, the next sweep does.
      this.tracked.delete(runId);
      throw error;
    }
  }

  private instanceLabels(): string[] {
    return [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${this.options.instanceTag}`];
  }

  /** An idle warm container's lifetime plus a run's time limit: nothing of ours lives longer unless leaked. */
  private maxContainerLifeMs(): number {
    return (this.options.warmPoolSize > 0 ? this.options.warmIdleMs : 0) + this.options.limits.timeoutMs + LEAK_GRACE_MS;
  }

  private async track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    try {
      return await work;
    } finally {
      this.inFlight.delete(work);
    }
  }

  /**
   * A finished run's container usually stops a moment after its answer (the entry script exits after
   * its marker); removing a stopped container costs the engine much less than killing one first.
   */
  private async destroyOnceStopped(member: SandboxContainer): Promise<void> {
    if (this.neverRan.has(member)) return this.destroy(member);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      member.exited.catch(() => undefined),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, EXIT_BEFORE_REMOVAL_MS))),
    ]);
    clearTimeout(timer);
    await this.destroy(member);
  }

  private async destroy(member: SandboxContainer): Promise<void> {
    try {
      await destroyContainer(member, this.runDirectories, this.options.logger);
    } finally {
      // A container whose removal failed (engine away) is untracked now: the next sweep removes it.
      this.watch.forget(member.container.id);
      this.tracked.delete(member.runId);
    }
  }
}

/**
 * What tells one directory from another that took its place (a rebuilt environment): device, inode
 * and change time; undefined when it is gone.
 */
async function directoryIdentity(hostPath: string): Promise<string | undefined> {
  try {
    const found = await stat(hostPath, { bigint: true });
    return `${found.dev}:${found.ino}:${found.ctimeNs}`;
  } catch {
    return undefined;
  }
}
