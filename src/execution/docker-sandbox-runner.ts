import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Duplex } from "node:stream";
import type Docker from "dockerode";
import type { Logger } from "pino";
import { RunCancelledError, SandboxUnavailableError, SkillEngineError } from "../errors.js";
import { CappedOutput } from "./capped-output.js";
import { fromDockerError, isAlreadyGone } from "./docker-errors.js";
import { isSuccessfulRun, summarizeRun } from "./error-summary.js";
import { CONTAINER_CODE_DIR, CONTAINER_SCRATCH_DIR, RunDirectories, SKILL_FILE_NAME } from "./run-directories.js";
import { cancellationOf, RunQueue } from "./run-queue.js";
import { ExitMarkerFilter } from "./exit-marker-filter.js";
import { jobFrame, WARM_RUNNER_SCRIPT } from "./warm-runner-script.js";
import { WarmPool } from "./warm-pool.js";
import type {
  EngineHealth,
  ExecutionResult,
  SandboxLimits,
  SandboxRunner,
  SandboxRunRequest,
} from "./sandbox-runner.js";

/** Labels every sandbox container carries, so a restarted service can find and reap its orphans. */
export const LABEL_MANAGED = "io.skill-engine.managed";
export const LABEL_INSTANCE = "io.skill-engine.instance";
/** Random per process: orphans are containers of this instance from any OTHER process. */
export const LABEL_BOOT = "io.skill-engine.boot";
export const LABEL_RUN_ID = "io.skill-engine.run-id";
export const LABEL_SKILL = "io.skill-engine.skill";
export const LABEL_PURPOSE = "io.skill-engine.purpose";

/** The unprivileged uid:gid skills run as; it needs no passwd entry in the image. */
export const SANDBOX_USER = "10001:10001";

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

/** Grace after the exit for the attach stream to deliver its last bytes. */
const OUTPUT_DRAIN_MS = 2_000;
/** 128 + SIGKILL: what a process killed by the kernel's OOM killer (or by us) exits with. */
const SIGKILL_EXIT_CODE = 137;
const OOM_FLAG_ATTEMPTS = 10;
const OOM_FLAG_RETRY_MS = 50;
/** Attempts to prepare a run when an operator wipes the sandbox directory under our feet. */
const PREPARE_ATTEMPTS = 5;

/** The run directory vanished before the skill started (a sandbox wipe); safe to retry. */
class RunDirectoryVanishedError extends Error {}

/** A container that is created, attached and started; cold ones run their skill, warm ones wait for a job. */
interface SandboxContainer {
  readonly runId: string;
  readonly container: Docker.Container;
  readonly attached: Duplex;
  readonly stdout: CappedOutput;
  readonly stderr: CappedOutput;
  /** Settles when the attach stream has delivered everything. */
  readonly outputDone: Promise<void>;
  /** The exit code, from a wait issued as soon as the container started. */
  readonly exited: Promise<number>;
  /** performance.now() at start. */
  readonly startedAt: number;
  /** Warm containers only: the job's nonce, and the exit code from the runner's exit marker. */
  readonly nonce?: string;
  readonly markerExit?: Promise<number>;
}

type ContainerRole = { readonly kind: "cold"; readonly request: SandboxRunRequest } | { readonly kind: "warm" };

/**
 * Runs each job in a fresh, hardened container that only sees its own run directory, and
 * removes the container and the directory on every path out (success, failure, timeout,
 * cancellation, shutdown). With the warm pool on, the container was created and started ahead of
 * time and has waited for this one job; otherwise (or when the pool is empty) it is started cold.
 */
export class DockerSandboxRunner implements SandboxRunner {
  private readonly runDirectories: RunDirectories;
  private readonly queue: RunQueue;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Prefix of this process's run ids and value of its boot label, so reaping never hits its own runs. */
  private readonly bootId = randomUUID().slice(0, 8);
  private readonly pool: WarmPool<SandboxContainer> | undefined;

  constructor(private readonly options: DockerSandboxRunnerOptions) {
    this.runDirectories = new RunDirectories(options.sandboxDir);
    this.queue = new RunQueue(options.maxConcurrentRuns, options.maxQueuedRuns);
    this.pool =
      options.warmPoolSize > 0
        ? new WarmPool<SandboxContainer>({
            size: options.warmPoolSize,
            idleMs: options.warmIdleMs,
            create: () => this.prepare(this.newRunId(), { kind: "warm" }),
            discard: (member) => this.destroy(member),
            logger: options.logger.child({ component: "warm-pool" }),
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
    const signal = request.signal
      ? AbortSignal.any([request.signal, this.shutdown.signal])
      : this.shutdown.signal;
    return this.queue.submit(() => this.track(this.execute(request, signal)), signal);
  }

  async health(): Promise<EngineHealth> {
    const { docker, image } = this.options;
    try {
      await docker.ping();
    } catch (error) {
      return { ready: false, detail: fromDockerError(error, { image, action: "ping" }).message };
    }
    try {
      await docker.getImage(image).inspect();
    } catch (error) {
      const translated = fromDockerError(error, { image, action: `inspect image ${image}` });
      return { ready: false, detail: translated.message };
    }
    return { ready: true, detail: "ok" };
  }

  async reapOrphans(): Promise<{ containers: number; runDirectories: number }> {
    const { docker, image, instanceTag, logger } = this.options;
    let containers = 0;
    try {
      const orphans = await docker.listContainers({
        all: true,
        filters: { label: [`${LABEL_MANAGED}=true`, `${LABEL_INSTANCE}=${instanceTag}`] },
      });
      for (const orphan of orphans) {
        if (orphan.Labels?.[LABEL_BOOT] === this.bootId) continue;
        logger.info({ containerId: orphan.Id, labels: orphan.Labels }, "removing orphaned sandbox container");
        await this.removeContainer(docker.getContainer(orphan.Id));
        containers++;
      }
    } catch (error) {
      throw fromDockerError(error, { image, action: "list orphaned containers" });
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

  private async execute(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    const warm = this.pool?.take();
    if (warm) {
      const result = await this.runWarm(warm, request, signal);
      if (result) return result;
    }
    return this.runCold(request, signal);
  }

  /**
   * Hands the job to a waiting container: writes the skill file into its (read-only to the
   * container) run directory, sends the payload on stdin, and waits. Undefined when the container
   * turned out unusable before the job started (its run directory was wiped while it waited):
   * the caller then starts one cold. The container is removed after the answer, off the hot path.
   */
  private async runWarm(member: SandboxContainer, request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult | undefined> {
    const log = this.options.logger.child({ runId: member.runId, skill: request.skillName, purpose: request.purpose, warm: true });
    try {
      if (signal.aborted) throw cancellationOf(signal);
      const handedOver = await this.runDirectories.writeSkill(member.runId, request.code).then(
        () => true,
        (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
          throw error;
        },
      );
      if (!handedOver) {
        log.debug("warm container's run directory was wiped while it waited; starting cold");
        return undefined;
      }
      const started = performance.now();
      let byMarker = false;
      const markerExit = member.markerExit?.then((code) => {
        byMarker = true;
        return code;
      });
      member.attached.write(jobFrame(request.payload, member.nonce ?? ""));
      const exit = markerExit ? Promise.race([markerExit, member.exited]) : member.exited;
      const { exitCode, timedOut, cancelled } = await this.awaitExit(member, exit, signal, this.options.limits.timeoutMs);
      const durationMs = Math.round(performance.now() - started);
      if (cancelled) throw cancellationOf(signal);
      const result = await this.finish(member, exitCode, timedOut, durationMs, log, byMarker);
      this.options.onRunFinished?.(result, "warm", request.purpose);
      return result;
    } catch (error) {
      if (error instanceof SkillEngineError) throw error;
      throw fromDockerError(error, { image: this.options.image, action: "run a warm sandbox container" });
    } finally {
      this.destroyLater(member);
    }
  }

  /**
   * Wiping the sandbox directory is allowed at any time. A wipe before the skill started is
   * invisible to the caller (the run is prepared again); one that cuts a run off mid-way is a
   * clear UNAVAILABLE, never a failure blamed on the skill.
   */
  private async runCold(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.runOnce(request, signal);
      } catch (error) {
        if (!(error instanceof RunDirectoryVanishedError)) throw error;
        if (attempt >= PREPARE_ATTEMPTS) {
          throw new SandboxUnavailableError(
            "the sandbox directory kept disappearing while the run was being prepared; retry once the wipe is over",
          );
        }
        this.options.logger.warn({ skill: request.skillName, attempt }, "run directory vanished before start; preparing again");
      }
    }
  }

  private async runOnce(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
    if (signal.aborted) throw cancellationOf(signal);
    const runId = this.newRunId();
    const log = this.options.logger.child({ runId, skill: request.skillName, purpose: request.purpose });
    const member = await this.prepare(runId, { kind: "cold", request });
    try {
      const { exitCode, timedOut, cancelled } = await this.awaitExit(member, member.exited, signal, this.options.limits.timeoutMs);
      const durationMs = Math.round(performance.now() - member.startedAt);
      if (cancelled) throw cancellationOf(signal);
      const result = await this.finish(member, exitCode, timedOut, durationMs, log, false);
      this.options.onRunFinished?.(result, "cold", request.purpose);
      return result;
    } catch (error) {
      if (error instanceof SkillEngineError) throw error;
      throw fromDockerError(error, { image: this.options.image, action: "run a sandbox container" });
    } finally {
      await this.destroy(member);
    }
  }

  /**
   * Creates the run directory (with the skill file for a cold run, empty for a warm one), the
   * hardened container, its attach stream, and starts it. Cleans up after itself on failure.
   */
  private async prepare(runId: string, role: ContainerRole): Promise<SandboxContainer> {
    const { docker, limits } = this.options;
    await this.runDirectories
      .create(runId, role.kind === "cold" ? role.request.code : undefined)
      .catch((error: unknown) => {
        throw (error as NodeJS.ErrnoException).code === "ENOENT" ? new RunDirectoryVanishedError() : error;
      });
    let container: Docker.Container | undefined;
    try {
      container = await docker.createContainer(this.containerSpec(runId, this.runDirectories.pathOf(runId), role)).catch(async (error: unknown) => {
        throw await this.preparationFailure(runId, error, "create a sandbox container");
      });
      const warm = role.kind === "warm";
      const attached = (await container.attach({
        stream: true,
        stdout: true,
        stderr: true,
        ...(warm ? { stdin: true, hijack: true } : {}),
      })) as unknown as Duplex;
      const stdout = new CappedOutput(limits.outputLimitBytes);
      const stderr = new CappedOutput(limits.outputLimitBytes);
      const nonce = warm ? randomUUID() : undefined;
      let markerExit: Promise<number> | undefined;
      if (nonce) {
        // The run is over when the runner's marker came through both streams: everything the skill
        // wrote before it has then arrived, whatever the engine's exit bookkeeping still takes.
        let stdoutCode: ((code: number) => void) | undefined;
        let stderrSeen: (() => void) | undefined;
        const onStdout = new Promise<number>((resolve) => (stdoutCode = resolve));
        const onStderr = new Promise<void>((resolve) => (stderrSeen = resolve));
        markerExit = Promise.all([onStdout, onStderr]).then(([code]) => code);
        container.modem.demuxStream(
          attached,
          new ExitMarkerFilter(nonce, stdout.writable, (code) => stdoutCode?.(code)),
          new ExitMarkerFilter(nonce, stderr.writable, () => stderrSeen?.()),
        );
      } else {
        container.modem.demuxStream(attached, stdout.writable, stderr.writable);
      }
      const outputDone = new Promise<void>((resolve) => {
        attached.once("end", resolve);
        attached.once("close", resolve);
        // A broken attach stream only loses output; it must never surface as an unhandled error.
        attached.on("error", (error) => {
          this.options.logger.warn({ err: error, runId }, "attach stream failed");
          resolve();
        });
      });
      const startedAt = performance.now();
      const started = container;
      await started.start().catch(async (error: unknown) => {
        throw await this.preparationFailure(runId, error, "start a sandbox container");
      });
      const exited = (started.wait() as Promise<{ StatusCode: number }>).then((outcome) => outcome.StatusCode);
      // Observed by the pool or the run; never an unhandled rejection on its own.
      exited.catch(() => undefined);
      return {
        runId,
        container: started,
        attached,
        stdout,
        stderr,
        outputDone,
        exited,
        startedAt,
        ...(nonce && markerExit ? { nonce, markerExit } : {}),
      };
    } catch (error) {
      if (container) await this.removeContainer(container);
      await this.runDirectories.remove(runId).catch(() => undefined);
      throw error;
    }
  }

  /** Reads the outcome of a run whose container has exited. */
  private async finish(
    member: SandboxContainer,
    exitCode: number,
    timedOut: boolean,
    durationMs: number,
    log: Logger,
    outputComplete: boolean,
  ): Promise<ExecutionResult> {
    const { limits } = this.options;
    if (!outputComplete) await Promise.race([member.outputDone, delay(OUTPUT_DRAIN_MS)]);
    member.attached.destroy();
    // The engine flags an OOM kill of any process in the container, a child's included: it is
    // reported, but the run's success stays the seed's rule (exit 0 and something printed).
    const oomKilled = !timedOut && (await this.wasOomKilled(member, exitCode));
    const stdoutText = member.stdout.text();
    const errorSummary = summarizeRun({
      exitCode,
      stdout: stdoutText,
      stderrTail: member.stderr.tailText(),
      timedOut,
      oomKilled,
      timeoutMs: limits.timeoutMs,
      memoryBytes: limits.memoryBytes,
    });
    const success = !timedOut && isSuccessfulRun(exitCode, stdoutText);
    if (!success && !(await this.runDirectories.exists(member.runId))) {
      throw new SandboxUnavailableError(
        "the sandbox directory was wiped while this run was in flight, so its result is not the skill's; retry",
      );
    }
    log.debug({ exitCode, durationMs, timedOut, oomKilled }, "sandbox run finished");
    return {
      exitCode,
      stdout: stdoutText,
      stderr: member.stderr.text(),
      durationMs,
      timedOut,
      oomKilled,
      stdoutTruncated: member.stdout.truncated,
      stderrTruncated: member.stderr.truncated,
      errorSummary,
      success,
    };
  }

  /**
   * The engine learns of OOM kills through an event that can arrive after the exit: when the
   * process died of SIGKILL that we did not send, ask again for a short while before saying no.
   */
  private async wasOomKilled(member: SandboxContainer, exitCode: number): Promise<boolean> {
    const attempts = exitCode === SIGKILL_EXIT_CODE ? OOM_FLAG_ATTEMPTS : 1;
    for (let attempt = 1; ; attempt++) {
      const state = await member.container.inspect().then((info) => info.State);
      if (state.OOMKilled || attempt >= attempts) return Boolean(state.OOMKilled);
      await delay(OOM_FLAG_RETRY_MS);
    }
  }

  /** A failed create/start is a retryable wipe when the run directory is gone, else an engine error. */
  private async preparationFailure(runId: string, error: unknown, action: string): Promise<Error> {
    if (!(await this.runDirectories.exists(runId))) return new RunDirectoryVanishedError();
    return fromDockerError(error, { image: this.options.image, action });
  }

  /** Waits for the container to exit, killing it on timeout or cancellation. */
  private async awaitExit(
    member: SandboxContainer,
    exit: Promise<number>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<{ exitCode: number; timedOut: boolean; cancelled: boolean }> {
    let timedOut = false;
    let cancelled = false;
    const kill = (): void => {
      member.container.kill({ signal: "SIGKILL" }).catch((error: unknown) => {
        if (!isAlreadyGone(error)) this.options.logger.warn({ err: error }, "could not kill sandbox container");
      });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      kill();
    };
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    try {
      const exitCode = await exit;
      return { exitCode, timedOut, cancelled };
    } catch (error) {
      throw fromDockerError(error, { image: this.options.image, action: "wait for a sandbox container" });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  /** Container first: once it is gone nothing can touch the run directory; then the directory. */
  private async destroy(member: SandboxContainer): Promise<void> {
    member.attached.destroy();
    await this.removeContainer(member.container);
    await this.runDirectories.remove(member.runId).catch((error: unknown) => {
      this.options.logger.warn({ err: error, runId: member.runId }, "could not remove run directory");
    });
  }

  /** Removal after the answer has gone out; tracked so shutdown still waits for it. */
  private destroyLater(member: SandboxContainer): void {
    void this.track(this.destroy(member));
  }

  private async removeContainer(container: Docker.Container): Promise<void> {
    try {
      await container.remove({ force: true, v: true });
    } catch (error) {
      if (isAlreadyGone(error)) return;
      this.options.logger.error({ err: error, containerId: container.id }, "could not remove sandbox container");
    }
  }

  private containerSpec(runId: string, runDir: string, role: ContainerRole): Docker.ContainerCreateOptions {
    const { image, runtime, instanceTag, limits } = this.options;
    const warm = role.kind === "warm";
    return {
      Image: image,
      Cmd: warm
        ? ["python3", "-c", WARM_RUNNER_SCRIPT]
        : ["python3", `${CONTAINER_CODE_DIR}/${SKILL_FILE_NAME}`, role.request.payload],
      User: SANDBOX_USER,
      WorkingDir: CONTAINER_SCRATCH_DIR,
      Env: ["HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8", "LANG=C.UTF-8"],
      Labels: {
        [LABEL_MANAGED]: "true",
        [LABEL_INSTANCE]: instanceTag,
        [LABEL_BOOT]: this.bootId,
        [LABEL_RUN_ID]: runId,
        [LABEL_SKILL]: warm ? "" : role.request.skillName,
        [LABEL_PURPOSE]: warm ? "warm" : role.request.purpose,
      },
      NetworkDisabled: true,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: warm,
      OpenStdin: warm,
      StdinOnce: false,
      Tty: false,
      HostConfig: {
        NetworkMode: "none",
        ReadonlyRootfs: true,
        CapDrop: ["ALL"],
        SecurityOpt: ["no-new-privileges"],
        Init: true,
        PidsLimit: limits.pidsLimit,
        Memory: limits.memoryBytes,
        MemorySwap: limits.memoryBytes,
        NanoCpus: Math.round(limits.cpus * 1e9),
        Tmpfs: { [CONTAINER_SCRATCH_DIR]: `rw,nosuid,nodev,noexec,size=${limits.tmpfsBytes},mode=1777` },
        // /dev/shm is the other in-memory writable place (multiprocessing needs it); same cap.
        ShmSize: limits.tmpfsBytes,
        // Read-only: nothing a skill writes ever reaches the host disk (no disk filling, no planted
        // links); its scratch space is the working directory on the size-capped /tmp tmpfs.
        Mounts: [{ Type: "bind", Source: runDir, Target: CONTAINER_CODE_DIR, ReadOnly: true }],
        Ulimits: [
          { Name: "nofile", Soft: 256, Hard: 256 },
          { Name: "fsize", Soft: limits.maxFileBytes, Hard: limits.maxFileBytes },
        ],
        // Output reaches us through attach; the engine must not also keep it on disk.
        LogConfig: { Type: "none", Config: {} },
        AutoRemove: false,
        ...(runtime ? { Runtime: runtime } : {}),
      },
    };
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
