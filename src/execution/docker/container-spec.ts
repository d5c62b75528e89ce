import type Docker from "dockerode";
import { CONTAINER_CODE_DIR, CONTAINER_OUTPUT_DIR, CONTAINER_SCRATCH_DIR } from "./run-directories.js";
import type { SandboxEnvironment, SandboxLimits } from "../sandbox-runner.js";
import { CONTAINER_ENTRY_SCRIPT } from "./container-entry.js";

/**
 * The sandbox container, as a security reviewer reads it: everything that confines a skill is
 * in this file (docs/security.md#sandbox-hardening). A skill is hostile until proven otherwise.
 */

/** Labels every sandbox container carries, so a restarted service can find and reap its orphans. */
export const LABEL_MANAGED = "io.skill-engine.managed";
export const LABEL_INSTANCE = "io.skill-engine.instance";
/** Random per process: orphans are containers of this instance from any OTHER process. */
export const LABEL_BOOT = "io.skill-engine.boot";
export const LABEL_RUN_ID = "io.skill-engine.run-id";
export const LABEL_SKILL = "io.skill-engine.skill";
export const LABEL_PURPOSE = "io.skill-engine.purpose";

/** The unprivileged uid (and gid) skills run as; it needs no passwd entry in the image. */
const SANDBOX_UID = 10001;
export const SANDBOX_USER = `${SANDBOX_UID}:${SANDBOX_UID}`;

/** Open files a skill may hold at once. */
const OPEN_FILES_LIMIT = 256;

/**
 * What the container is for. Both kinds start the entry script (container-entry.ts), which reads exactly one job
 * (the payload) from stdin: the payload never appears on a command line, where any local user
 * would see it in `ps` (docs/security.md#the-payload-travels-on-stdin). A cold container is made
 * for one skill's run and gets its job as soon as it has started; a warm one waits in the pool: the
 * plain pool's without an environment, an environment's pool's with it, serving that environment's
 * runs only (docs/packages.md#warm-containers-of-an-environment).
 */
export type ContainerCommand =
  | { readonly kind: "cold"; readonly skillName: string; readonly purpose: string; readonly environment?: SandboxEnvironment }
  | { readonly kind: "warm"; readonly environment?: SandboxEnvironment };

/** Where a run's environment of packages is mounted, read-only (docs/packages.md#at-run-time). */
export const CONTAINER_ENVIRONMENT_DIR = "/opt/skill-env";

/** The only variables an environment may set: its import and library paths. */
const ENVIRONMENT_VARIABLES = new Set(["PYTHONPATH", "LD_LIBRARY_PATH"]);

/**
 * An environment's variables: the ones its build computed (docs/packages.md#at-run-time), limited to
 * the import and library paths; without them, pip's target then what Debian packages unpacked.
 */
function environmentVariables(environment: SandboxEnvironment): string[] {
  const given = Object.entries(environment.variables ?? {}).filter(([name]) => ENVIRONMENT_VARIABLES.has(name));
  return given.length > 0 ? given.map(([name, value]) => `${name}=${value}`) : [...DEFAULT_ENVIRONMENT_PATHS];
}

/** The import and library paths into an environment: pip's target, then what Debian packages unpacked. */
const DEFAULT_ENVIRONMENT_PATHS = [
  `PYTHONPATH=${CONTAINER_ENVIRONMENT_DIR}/site:${CONTAINER_ENVIRONMENT_DIR}/deb/usr/lib/python3/dist-packages`,
  `LD_LIBRARY_PATH=${CONTAINER_ENVIRONMENT_DIR}/deb/usr/lib/x86_64-linux-gnu:${CONTAINER_ENVIRONMENT_DIR}/deb/lib/x86_64-linux-gnu`,
];

export interface SandboxContainerSpecInput {
  readonly image: string;
  /** OCI runtime (`runsc` for gVisor); undefined uses the engine's default. */
  readonly runtime: string | undefined;
  readonly limits: SandboxLimits;
  /** The run's own directory on the host: the only host path the container sees, read-only. */
  readonly runDir: string;
  readonly instanceTag: string;
  readonly bootId: string;
  readonly runId: string;
  readonly command: ContainerCommand;
}

/** The engine's create options for one sandbox container. Pure: the same input gives the same spec. */
export function sandboxContainerSpec(input: SandboxContainerSpecInput): Docker.ContainerCreateOptions {
  const { limits, command } = input;
  const warm = command.kind === "warm";
  const { environment } = command;
  return {
    Image: input.image,
    Cmd: ["python3", "-c", CONTAINER_ENTRY_SCRIPT],
    User: SANDBOX_USER,
    WorkingDir: CONTAINER_SCRATCH_DIR,
    Env: [
      "HOME=/tmp",
      "PYTHONDONTWRITEBYTECODE=1",
      "PYTHONUNBUFFERED=1",
      "PYTHONIOENCODING=utf-8",
      "LANG=C.UTF-8",
      ...(environment ? environmentVariables(environment) : []),
    ],
    Labels: {
      [LABEL_MANAGED]: "true",
      [LABEL_INSTANCE]: input.instanceTag,
      [LABEL_BOOT]: input.bootId,
      [LABEL_RUN_ID]: input.runId,
      [LABEL_SKILL]: warm ? "" : command.skillName,
      [LABEL_PURPOSE]: warm ? "warm" : command.purpose,
    },
    // No network at all: no interface but loopback.
    NetworkDisabled: true,
    AttachStdout: true,
    AttachStderr: true,
    // Every container reads its one job from stdin (container-entry.ts).
    AttachStdin: true,
    OpenStdin: true,
    StdinOnce: false,
    Tty: false,
    HostConfig: {
      NetworkMode: "none",
      ReadonlyRootfs: true,
      CapDrop: ["ALL"],
      SecurityOpt: ["no-new-privileges"],
      // A real PID 1 reaps zombies and forwards signals; the skill is never PID 1.
      Init: true,
      PidsLimit: limits.pidsLimit,
      Memory: limits.memoryBytes,
      // Memory + swap = memory: no swap.
      MemorySwap: limits.memoryBytes,
      NanoCpus: Math.round(limits.cpus * 1e9),
      Tmpfs: {
        [CONTAINER_SCRATCH_DIR]: `rw,nosuid,nodev,noexec,size=${limits.tmpfsBytes},mode=1777`,
        // What the run hands back (docs/files.md#output-files): in memory, size-capped, the sandbox
        // user's alone; the entry script reads it back, the host never looks at it.
        [CONTAINER_OUTPUT_DIR]: `rw,nosuid,nodev,noexec,size=${limits.outputFiles.spaceBytes},uid=${SANDBOX_UID},gid=${SANDBOX_UID},mode=0700`,
      },
      // /dev/shm is the other in-memory writable place (multiprocessing needs it); same cap.
      ShmSize: limits.tmpfsBytes,
      // Read-only: nothing a skill writes ever reaches the host disk (no disk filling, no planted
      // links); its scratch space is the working directory on the size-capped /tmp tmpfs.
      // An environment of packages is the one other host path a container sees, read-only too: a
      // skill can import from it and never change it (docs/packages.md#at-run-time).
      Mounts: [
        { Type: "bind", Source: input.runDir, Target: CONTAINER_CODE_DIR, ReadOnly: true },
        ...(environment
          ? [{ Type: "bind" as const, Source: environment.hostPath, Target: CONTAINER_ENVIRONMENT_DIR, ReadOnly: true }]
          : []),
      ],
      Ulimits: [
        { Name: "nofile", Soft: OPEN_FILES_LIMIT, Hard: OPEN_FILES_LIMIT },
        { Name: "fsize", Soft: limits.maxFileBytes, Hard: limits.maxFileBytes },
      ],
      // Output reaches us through attach; the engine must not also keep it on disk.
      LogConfig: { Type: "none", Config: {} },
      AutoRemove: false,
      ...(input.runtime ? { Runtime: input.runtime } : {}),
    },
  };
}
