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
}

/** Grace after the exit for the attach stream to deliver its last bytes. */
const OUTPUT_DRAIN_MS = 2_000;
/** Attempts to prepare a run when an operator wipes the sandbox directory under our feet. */
const PREPARE_ATTEMPTS = 5;

/** The run directory vanished before the skill started (a sandbox wipe); safe to retry. */
class RunDirectoryVanishedError extends Error {}

/**
 * Runs each job in a fresh, hardened container that only sees its own run directory, and
 * removes the container and the directory on every path out (success, failure, timeout,
 * cancellation, shutdown).
 */
export class DockerSandboxRunner implements SandboxRunner {
  private readonly runDirectories: RunDirectories;
  private readonly queue: RunQueue;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Prefix of this process's run ids and value of its boot label, so reaping never hits its own runs. */
  private readonly bootId = randomUUID().slice(0, 8);

  constructor(private readonly options: DockerSandboxRunnerOptions) {
    this.runDirectories = new RunDirectories(options.sandboxDir);
    this.queue = new RunQueue(options.maxConcurrentRuns, options.maxQueuedRuns);
  }

  async run(request: SandboxRunRequest): Promise<ExecutionResult> {
    if (this.shutdown.signal.aborted) throw new RunCancelledError("shutdown");
    const signal = request.signal
      ? AbortSignal.any([request.signal, this.shutdown.signal])
      : this.shutdown.signal;
    return this.queue.submit(() => this.track(this.runWithRetry(request, signal)), signal);
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
    await Promise.allSettled([...this.inFlight]);
    await this.queue.drain();
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
   * Wiping the sandbox directory is allowed at any time. A wipe before the skill started is
   * invisible to the caller (the run is prepared again); one that cuts a run off mid-way is a
   * clear UNAVAILABLE, never a failure blamed on the skill.
   */
  private async runWithRetry(request: SandboxRunRequest, signal: AbortSignal): Promise<ExecutionResult> {
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
    const { docker, logger, limits, instanceTag } = this.options;
    if (signal.aborted) throw cancellationOf(signal);
    const runId = `${instanceTag}-${this.bootId}-${randomUUID()}`;
    const log = logger.child({ runId, skill: request.skillName, purpose: request.purpose });
    const stdout = new CappedOutput(limits.outputLimitBytes);
    const stderr = new CappedOutput(limits.outputLimitBytes);
    let container: Docker.Container | undefined;
    try {
      const runDir = await this.runDirectories.create(runId, request.code).catch((error: unknown) => {
        throw (error as NodeJS.ErrnoException).code === "ENOENT" ? new RunDirectoryVanishedError() : error;
      });
      log.debug({ runDir }, "creating sandbox container");
      container = await docker
        .createContainer(this.containerSpec(runId, runDir, request))
        .catch(async (error: unknown) => {
          throw await this.preparationFailure(runId, error, "create a sandbox container");
        });
      const attached = (await container.attach({ stream: true, stdout: true, stderr: true })) as unknown as Duplex;
      container.modem.demuxStream(attached, stdout.writable, stderr.writable);
      const outputDone = new Promise<void>((resolve) => {
        attached.once("end", resolve);
        attached.once("close", resolve);
        // A broken attach stream only loses output; it must never surface as an unhandled error.
        attached.on("error", (error) => {
          log.warn({ err: error }, "attach stream failed");
          resolve();
        });
      });

      const started = performance.now();
      await container.start().catch(async (error: unknown) => {
        throw await this.preparationFailure(runId, error, "start a sandbox container");
      });
      const { exitCode, timedOut, cancelled } = await this.awaitExit(container, signal, limits.timeoutMs);
      const durationMs = Math.round(performance.now() - started);
      if (cancelled) throw cancellationOf(signal);

      await Promise.race([outputDone, delay(OUTPUT_DRAIN_MS)]);
      attached.destroy();
      const state = await container.inspect().then((info) => info.State);
      // The engine flags an OOM kill of any process in the container, a child's included: it is
      // reported, but the run's success stays the seed's rule (exit 0 and something printed).
      const oomKilled = !timedOut && Boolean(state.OOMKilled);
      const stdoutText = stdout.text();
      const errorSummary = summarizeRun({
        exitCode,
        stdout: stdoutText,
        stderrTail: stderr.tailText(),
        timedOut,
        oomKilled,
        timeoutMs: limits.timeoutMs,
        memoryBytes: limits.memoryBytes,
      });
      const success = !timedOut && isSuccessfulRun(exitCode, stdoutText);
      if (!success && !(await this.runDirectories.exists(runId))) {
        throw new SandboxUnavailableError(
          "the sandbox directory was wiped while this run was in flight, so its result is not the skill's; retry",
        );
      }
      const result: ExecutionResult = {
        exitCode,
        stdout: stdoutText,
        stderr: stderr.text(),
        durationMs,
        timedOut,
        oomKilled,
        stdoutTruncated: stdout.truncated,
        stderrTruncated: stderr.truncated,
        errorSummary,
        success,
      };
      log.debug({ exitCode, durationMs, timedOut, oomKilled }, "sandbox run finished");
      return result;
    } catch (error) {
      if (error instanceof RunDirectoryVanishedError || error instanceof SkillEngineError) throw error;
      throw fromDockerError(error, { image: this.options.image, action: "run a sandbox container" });
    } finally {
      // Container first: once it is gone nothing can plant links in the run directory.
      if (container) await this.removeContainer(container);
      await this.runDirectories.remove(runId).catch((error: unknown) => {
        log.warn({ err: error }, "could not remove run directory");
      });
    }
  }

  /** A failed create/start is a retryable wipe when the run directory is gone, else an engine error. */
  private async preparationFailure(runId: string, error: unknown, action: string): Promise<Error> {
    if (!(await this.runDirectories.exists(runId))) return new RunDirectoryVanishedError();
    return fromDockerError(error, { image: this.options.image, action });
  }

  /** Waits for the container to exit, killing it on timeout or cancellation. */
  private async awaitExit(
    container: Docker.Container,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<{ exitCode: number; timedOut: boolean; cancelled: boolean }> {
    let timedOut = false;
    let cancelled = false;
    const kill = (): void => {
      container.kill({ signal: "SIGKILL" }).catch((error: unknown) => {
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
      const outcome = (await container.wait()) as { StatusCode: number };
      return { exitCode: outcome.StatusCode, timedOut, cancelled };
    } catch (error) {
      throw fromDockerError(error, { image: this.options.image, action: "wait for a sandbox container" });
    } finally {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
    }
  }

  private async removeContainer(container: Docker.Container): Promise<void> {
    try {
      await container.remove({ force: true, v: true });
    } catch (error) {
      if (isAlreadyGone(error)) return;
      this.options.logger.error({ err: error, containerId: container.id }, "could not remove sandbox container");
    }
  }

  private containerSpec(runId: string, runDir: string, request: SandboxRunRequest): Docker.ContainerCreateOptions {
    const { image, runtime, instanceTag, limits } = this.options;
    return {
      Image: image,
      Cmd: ["python3", `${CONTAINER_CODE_DIR}/${SKILL_FILE_NAME}`, request.payload],
      User: SANDBOX_USER,
      WorkingDir: CONTAINER_SCRATCH_DIR,
      Env: ["HOME=/tmp", "PYTHONDONTWRITEBYTECODE=1", "PYTHONUNBUFFERED=1", "PYTHONIOENCODING=utf-8", "LANG=C.UTF-8"],
      Labels: {
        [LABEL_MANAGED]: "true",
        [LABEL_INSTANCE]: instanceTag,
        [LABEL_BOOT]: this.bootId,
        [LABEL_RUN_ID]: runId,
        [LABEL_SKILL]: request.skillName,
        [LABEL_PURPOSE]: request.purpose,
      },
      NetworkDisabled: true,
      AttachStdout: true,
      AttachStderr: true,
      AttachStdin: false,
      OpenStdin: false,
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
