import { RunCancelledError } from "../errors/index.js";

/**
 * The execution plane's port. The control plane only speaks these types; each adapter (the local
 * Docker engine in docker/, the bus in nats/) translates them to its own engine.
 */

/** Resource limits of one sandbox run. Every field has a documented default in the config. */
export interface SandboxLimits {
  /** Wall-clock limit from container start; the container is killed on expiry. */
  readonly timeoutMs: number;
  /** Memory limit in bytes; swap is disabled (memory + swap = memory). */
  readonly memoryBytes: number;
  /** CPU quota, in CPUs (1 = one core). */
  readonly cpus: number;
  /** Maximum number of processes/threads inside the container. */
  readonly pidsLimit: number;
  /** Bytes of stdout and of stderr kept each; the rest is dropped and flagged as truncated. */
  readonly outputLimitBytes: number;
  /** Size of the tmpfs on /tmp (the skill's working directory) and of /dev/shm: its only writable places. */
  readonly tmpfsBytes: number;
  /** Largest single file the skill may write (RLIMIT_FSIZE): a runaway write fails fast with EFBIG. */
  readonly maxFileBytes: number;
  /** What a run may hand back under `/sandbox/out/` (docs/files.md#output-files). */
  readonly outputFiles: OutputFileLimits;
}

/** The output space and what of it comes back inline (docs/files.md#output-files). */
export interface OutputFileLimits {
  /** Size of the tmpfs at `/sandbox/out`: a skill that writes more gets ENOSPC, never the host's disk. */
  readonly spaceBytes: number;
  /** Files returned at most; the rest are counted in a warning. */
  readonly maxFiles: number;
  /** Bytes of one file returned inline; a larger file comes back `truncated`. */
  readonly maxFileBytes: number;
  /** Bytes of all files returned inline together; past them files come back `truncated`. */
  readonly maxTotalBytes: number;
}

/** One job for the sandbox: run the skill once on its payload, in a container used for nothing else. */
export interface SandboxRunRequest {
  /** Python source of the skill; written to the run's own directory, never anywhere else. */
  readonly code: string;
  /** JSON text handed to the skill as sys.argv[1] (it reaches the container on stdin, never on a command line). */
  readonly payload: string;
  /** What the run is for, recorded as container labels and in logs. */
  readonly purpose: "test" | "invoke";
  /** Skill name, for labels and logs. */
  readonly skillName: string;
  /**
   * The agent the run is for: the caller of the call that needs it (an invocation, a registration's or
   * patch's test run, the re-tests of dependents it causes, a composed skill's steps). The run queue
   * shares its slots and its room fairly among agents (docs/security.md#fair-share-of-the-run-queue).
   */
  readonly agentId: string;
  /** Aborting stops the run and removes its container. */
  readonly signal?: AbortSignal;
  /**
   * Extra read-only files placed beside the skill file (its dependencies' code, importable by
   * module name): plain file names only, never `skill.py`.
   */
  readonly files?: readonly SandboxFile[];
  /**
   * A skill folder (docs/skill-sources.md#running), placed read-only under
   * `/sandbox/skill_dir/`: relative paths, no `..`, no links. The skill file is then a launcher
   * that makes that folder its working directory.
   */
  readonly folder?: readonly SandboxFolderFile[];
  /**
   * The caller's promise that running this job twice is harmless. Only then may an invocation whose
   * execution host vanished mid-run be tried again on another (docs/execution-hosts.md#at-most-once);
   * test runs may always be.
   */
  readonly idempotencyKey?: string;
  /**
   * The environment holding the skill's declared packages (docs/packages.md#at-run-time): mounted
   * read-only at `/opt/skill-env` and put on the import path. Absent: the sandbox image alone.
   */
  readonly environment?: SandboxEnvironment;
  /**
   * Files the caller hands the run, placed read-only under `/sandbox/in/<path>`
   * (docs/files.md#input-files); their paths were validated by the control plane.
   */
  readonly inputFiles?: readonly RunInputFile[];
  /**
   * The invoking agent's values of the secrets the version declares, by name
   * (docs/security.md#declaring-and-delivering). They travel to the container in its job frame on
   * stdin, and the entry script sets them as environment variables of the skill's process: never
   * in the container's configuration, on a command line, in a log line or in the run directory.
   */
  readonly secrets?: Readonly<Record<string, string>>;
  /**
   * The hosts the version declared in `network_allow` (docs/security.md#egress), already checked
   * against the operator's policy: the run reaches them, and nothing else, through the engine's
   * egress gateway. Absent or empty: no network at all, as every run had before.
   */
  readonly networkAllow?: readonly string[];
}

/** A file handed to a run: a relative path of ordinary names and its bytes (docs/files.md#input-files). */
export interface RunInputFile {
  readonly path: string;
  readonly content: Buffer;
}

/** A regular file a run left under `/sandbox/out/` (docs/files.md#output-files). */
export interface RunOutputFile {
  /** Relative to `/sandbox/out/`. */
  readonly path: string;
  /** The whole file's size, also when its content is truncated. */
  readonly sizeBytes: number;
  /** Hex SHA-256 of the whole file (computed in the sandbox when the content is truncated). */
  readonly sha256: string;
  /** The file's bytes, or its first bytes when truncated. */
  readonly content: Buffer;
  readonly truncated: boolean;
  /** From the file name's extension; `application/octet-stream` when unknown. */
  readonly mediaType: string;
}

/** A built environment of packages, as the execution plane needs it. */
export interface SandboxEnvironment {
  /** Its content hash (docs/packages.md#environments). */
  readonly id: string;
  /** Its directory on the host of the local Docker engine; never written by a run. */
  readonly hostPath: string;
  /**
   * The variables that put it on the import and library paths (`PYTHONPATH`, `LD_LIBRARY_PATH`; no
   * other name is set), as its build found them; absent: the default paths (docs/packages.md#at-run-time).
   */
  readonly variables?: Readonly<Record<string, string>>;
}

/** A file of a skill folder: its path relative to the folder and its bytes. */
export interface SandboxFolderFile {
  readonly path: string;
  readonly content: Buffer;
}

/** A file of a run directory besides the skill: a bare file name and its text. */
export interface SandboxFile {
  readonly name: string;
  readonly content: string;
}

/** What a run produced. Success means exit code 0 and non-empty stdout. */
export interface ExecutionResult {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
  readonly stdoutTruncated: boolean;
  readonly stderrTruncated: boolean;
  /** One line saying why the run failed; empty on success. */
  readonly errorSummary: string;
  readonly success: boolean;
  /** The files the run left under `/sandbox/out/`; absent or empty when none. */
  readonly outputFiles?: readonly RunOutputFile[];
  /**
   * What of `/sandbox/out/` did not come back and why (a link, a FIFO, too many files, a name that is
   * not a plain path), one line each (docs/files.md#output-files).
   */
  readonly fileWarnings?: readonly string[];
  /** What the egress gateway refused or cut off during the run, one line each (docs/security.md#egress). */
  readonly networkWarnings?: readonly string[];
}

/** Whether the engine can run sandboxes right now, and if not, what an operator should do. */
export interface EngineHealth {
  readonly ready: boolean;
  readonly detail: string;
}

/**
 * The sandbox-runner port: runs skills in single-use sandboxes. ("Runner" alone names an execution
 * host, not this port: docs/execution-hosts.md#vocabulary.)
 *
 * Implementations throw `SandboxUnavailableError` (naming the fault) when the engine cannot be
 * reached or the infrastructure cut the run short (docs/skill-lifecycle.md#what-counts-against-a-skill),
 * `QueueFullError` when too many runs are waiting (`AgentQueueFullError` when the request's agent has
 * used its share: docs/security.md#fair-share-of-the-run-queue), and `RunCancelledError` when the request's
 * signal aborts the run; a skill that fails is a normal `ExecutionResult`, never an exception.
 */
export interface SandboxRunner {
  run(request: SandboxRunRequest): Promise<ExecutionResult>;
  health(): Promise<EngineHealth>;
  /**
   * Removes the containers and run directories of this instance that no run in flight owns:
   * what a previous, crashed process left behind, what this process could not remove while the
   * engine was away, and anything older than a container can legitimately live. Never touches a
   * run in flight, so it is safe at any time (the sandbox sweep calls it periodically).
   */
  reapOrphans(): Promise<{ containers: number; runDirectories: number }>;
  /**
   * Removes every run directory (what `rm -rf` of the sandbox dir does, as an RPC). Runs in
   * flight that it cuts off fail with UNAVAILABLE; later runs recreate what they need.
   */
  wipe(): Promise<{ removedRunDirectories: number }>;
  /** Stops every run in flight, removes its container, and refuses new runs. */
  close(): Promise<void>;
}

/** Live figures of an execution plane, read by the metrics at scrape time and by the shutdown's summary. */
export interface PlaneGauges {
  /** Runs waiting for a slot (locally) or for an execution host with room (over the bus). */
  readonly queueDepth: number;
  /** Runs executing now. */
  readonly runningRuns: number;
  /** Warm containers waiting for a job (over the bus: the sum the runners last reported). */
  readonly warmIdle: number;
  /** Finished runs' containers not removed yet. */
  readonly awaitingRemoval: number;
}

/** The execution plane as the service holds it: runs, plus the figures operators watch. */
export interface ExecutionPlane extends SandboxRunner, PlaneGauges {
  /** Starts whatever runs in the background (the warm pool, the runner directory); call once the engine or bus answers. */
  startPool(): void;
}

/** What a finished run counts as in the metrics. */
export function runOutcome(result: ExecutionResult): "success" | "failure" | "timeout" | "oom" {
  return result.timedOut ? "timeout" : result.success ? "success" : result.oomKilled ? "oom" : "failure";
}

/** Maps an aborted signal's reason onto the service's cancellation error: what every adapter throws when a run's signal aborts. */
export function cancellationOf(signal: AbortSignal): RunCancelledError {
  const reason: unknown = signal.reason;
  if (reason instanceof RunCancelledError) return reason;
  return new RunCancelledError("cancelled");
}
