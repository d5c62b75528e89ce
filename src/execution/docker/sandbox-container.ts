import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { Duplex } from "node:stream";
import type { Logger } from "pino";
import { CappedOutput } from "./capped-output.js";
import { type ContainerCommand, sandboxContainerSpec } from "./container-spec.js";
import type { DockerEngineClient, EngineContainer } from "./docker-engine-client.js";
import type { EngineWatch, WatchMark } from "./engine-watch.js";
import { ExitMarkerFilter } from "./exit-marker-filter.js";
import { type FilesFrame, FilesFrameFilter } from "./files-frame-filter.js";
import type { RunDirectories } from "./run-directories.js";
import type { RunInputFile, SandboxFile, SandboxFolderFile, SandboxLimits } from "../sandbox-runner.js";

/** A container that is created, attached and started, its runner waiting on stdin for its one job. */
export interface SandboxContainer {
  readonly runId: string;
  readonly container: EngineContainer;
  readonly attached: Duplex;
  readonly stdout: CappedOutput;
  readonly stderr: CappedOutput;
  /** Settles when the attach stream has delivered everything. */
  readonly outputDone: Promise<void>;
  /** The exit code, from a wait issued as soon as the container started. */
  readonly exited: Promise<number>;
  /** performance.now() at start. */
  readonly startedAt: number;
  /** What the engine watch knew before the container was created (engine-watch.ts). */
  readonly engineMark: WatchMark;
  /** The job's nonce, and the exit code from the entry script's exit marker. */
  readonly nonce: string;
  readonly markerExit: Promise<number>;
  /** Releases output held back while it could have been the start of the marker; call once the run is over. */
  readonly flushOutput: () => void;
  /** The output files frame the entry script sent before its marker, if any (docs/files.md#output-files). */
  readonly filesFrame: () => FilesFrame | undefined;
}

/** The run directory vanished before the skill started (a sandbox wipe); safe to prepare again. */
export class RunDirectoryVanishedError extends Error {}

/** What preparing a container needs from the sandbox runner that owns it. */
export interface ContainerFactory {
  readonly engine: DockerEngineClient;
  readonly runDirectories: RunDirectories;
  readonly image: string;
  readonly runtime: string | undefined;
  readonly limits: SandboxLimits;
  readonly instanceTag: string;
  readonly bootId: string;
  readonly watch: EngineWatch;
  readonly logger: Logger;
}

/**
 * Creates the run directory (with the skill file for a cold run, empty for a warm one), the
 * hardened container, its attach stream, and starts it. Cleans up after itself on failure; a
 * failure caused by a wipe of the run directory is a {@link RunDirectoryVanishedError}.
 */
export async function prepareContainer(
  factory: ContainerFactory,
  runId: string,
  command: ContainerCommand,
  code?: string,
  files?: readonly SandboxFile[],
  folder?: readonly SandboxFolderFile[],
  inputFiles?: readonly RunInputFile[],
): Promise<SandboxContainer> {
  const { engine, runDirectories, limits } = factory;
  const engineMark = factory.watch.mark();
  await runDirectories.create(runId, code, files, folder, inputFiles).catch(async (error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") throw new RunDirectoryVanishedError();
    // A directory made before the skill file failed (a full disk) must not stay behind.
    await runDirectories.remove(runId).catch(() => undefined);
    throw error;
  });
  /** A failed create or start is a wipe when the run directory is gone, else the engine's error. */
  const vanishedOr = async (error: unknown): Promise<never> => {
    throw (await runDirectories.exists(runId)) ? error : new RunDirectoryVanishedError();
  };
  let container: EngineContainer | undefined;
  try {
    const spec = sandboxContainerSpec({
      image: factory.image,
      runtime: factory.runtime,
      limits,
      runDir: runDirectories.pathOf(runId),
      instanceTag: factory.instanceTag,
      bootId: factory.bootId,
      runId,
      command,
    });
    container = await engine.createContainer(spec, runId).catch(vanishedOr);
    const attached = await container.attach({ stdin: true });
    const stdout = new CappedOutput(limits.outputLimitBytes);
    const stderr = new CappedOutput(limits.outputLimitBytes);
    const nonce = randomUUID();
    const { markerExit, flushOutput, filesFrame } = demultiplexUntilMarker(container, attached, nonce, stdout, stderr, limits);
    const outputDone = new Promise<void>((resolve) => {
      attached.once("end", resolve);
      attached.once("close", resolve);
      // A broken attach stream only loses output; it must never surface as an unhandled error.
      attached.on("error", (error) => {
        factory.logger.warn({ err: error, runId }, "attach stream failed");
        resolve();
      });
    });
    const startedAt = performance.now();
    await container.start().catch(vanishedOr);
    const exited = container.wait();
    // Observed by the pool or the run; never an unhandled rejection on its own.
    exited.catch(() => undefined);
    return {
      runId,
      container,
      attached,
      stdout,
      stderr,
      outputDone,
      exited,
      startedAt,
      engineMark,
      nonce,
      markerExit,
      flushOutput,
      filesFrame,
    };
  } catch (error) {
    await container?.remove();
    await runDirectories.remove(runId).catch(() => undefined);
    throw error;
  }
}

/**
 * A run is over when the entry script's marker came through both streams: everything
 * the skill wrote before it has then arrived, whatever the engine's exit bookkeeping still takes.
 * Resolves with the exit code the marker carries. Stdout first passes the output files filter,
 * which takes the files frame out of it (docs/files.md#output-files).
 */
function demultiplexUntilMarker(
  container: EngineContainer,
  attached: Duplex,
  nonce: string,
  stdout: CappedOutput,
  stderr: CappedOutput,
  limits: SandboxLimits,
): { markerExit: Promise<number>; flushOutput: () => void; filesFrame: () => FilesFrame | undefined } {
  let stdoutCode: ((code: number) => void) | undefined;
  let stderrSeen: (() => void) | undefined;
  const onStdout = new Promise<number>((resolve) => (stdoutCode = resolve));
  const onStderr = new Promise<void>((resolve) => (stderrSeen = resolve));
  const filters = [
    new ExitMarkerFilter(nonce, stdout.writable, (code) => stdoutCode?.(code)),
    new ExitMarkerFilter(nonce, stderr.writable, () => stderrSeen?.()),
  ] as const;
  const files = new FilesFrameFilter(nonce, filters[0], limits.outputFiles.maxTotalBytes);
  container.demultiplex(attached, files, filters[1]);
  return {
    markerExit: Promise.all([onStdout, onStderr]).then(([code]) => code),
    flushOutput: () => {
      files.flush();
      filters.forEach((filter) => filter.flush());
    },
    filesFrame: () => files.frame(),
  };
}

/** Container first: once it is gone nothing can touch the run directory; then the directory. */
export async function destroyContainer(member: SandboxContainer, runDirectories: RunDirectories, logger: Logger): Promise<void> {
  member.attached.destroy();
  await member.container.remove();
  await runDirectories.remove(member.runId).catch((error: unknown) => {
    logger.warn({ err: error, runId: member.runId }, "could not remove run directory");
  });
}
