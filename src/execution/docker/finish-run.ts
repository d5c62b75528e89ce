import { performance } from "node:perf_hooks";
import type { Logger } from "pino";
import { SandboxUnavailableError } from "../../errors/index.js";
import { isSuccessfulRun, summarizeRun } from "../error-summary.js";
import { type FaultProbe, infrastructureFault } from "./infrastructure-fault.js";
import { readOutputFiles } from "./output-files.js";
import type { RunDirectories } from "./run-directories.js";
import type { SandboxContainer } from "./sandbox-container.js";
import { cancellationOf, type ExecutionResult, type SandboxLimits } from "../sandbox-runner.js";

/** Grace after the exit for the attach stream to deliver its last bytes. */
const OUTPUT_DRAIN_MS = 2_000;
/** 128 + SIGKILL: what a process killed by the kernel's OOM killer (or by us) exits with. */
const SIGKILL_EXIT_CODE = 137;
/** Exit codes from 128 up mean the process died of a signal (128 + its number). */
const SIGNAL_EXIT_BASE = 128;
const OOM_FLAG_ATTEMPTS = 10;
const OOM_FLAG_RETRY_MS = 50;
/** How long the engine has to confirm that a killed container stopped before the run gives up on it. */
const KILL_CONFIRM_MS = 10_000;

/** How a started run ends, the same for warm and cold containers. */
export interface RunEnding {
  /** Settles with the exit code: the container's wait, or the entry script's exit marker. */
  readonly exit: Promise<number>;
  /** performance.now() when the skill began (container start, or the job's hand-over). */
  readonly startedAt: number;
  /** True once the exit marker has come through: all output is in, no need to wait for the stream's end. */
  readonly outputComplete: () => boolean;
}

export interface FinishContext {
  readonly limits: SandboxLimits;
  readonly runDirectories: RunDirectories;
  readonly logger: Logger;
  /** Tells the engine's and operators' kills and outages apart from the skill's own failures. */
  readonly faults: FaultProbe;
}

/**
 * The one way a run finishes: wait for the exit (killing the container on timeout or when the
 * caller gives up), collect the output, ask the engine about an OOM kill, and judge the result.
 * A failure that the infrastructure caused (the engine went away or cut the run short, the
 * container was killed or removed from outside, the run directory was wiped) is thrown as a
 * `SandboxUnavailableError` naming the fault: it is never the skill's result
 * (docs/skill-lifecycle.md#what-counts-against-a-skill). Throws `RunCancelledError` when `signal`
 * aborted the run.
 */
export async function finishRun(
  member: SandboxContainer,
  ending: RunEnding,
  signal: AbortSignal,
  context: FinishContext,
): Promise<ExecutionResult> {
  const { limits, logger } = context;
  const { exitCode, timedOut, cancelled } = await awaitExit(member, ending.exit, signal, limits.timeoutMs);
  const durationMs = Math.round(performance.now() - ending.startedAt);
  if (cancelled) throw cancellationOf(signal);
  if (!ending.outputComplete()) await Promise.race([member.outputDone, delay(OUTPUT_DRAIN_MS)]);
  member.attached.destroy();
  member.flushOutput();
  // The engine flags an OOM kill of any process in the container, a child's included: it is
  // reported, but the run's success stays the success rule (exit 0 and something printed).
  const state = timedOut ? { gone: false, oomKilled: false } : await containerState(member, exitCode, context.faults);
  const oomKilled = state.oomKilled;
  const stdoutText = member.stdout.text();
  const success = !timedOut && isSuccessfulRun(exitCode, stdoutText);
  if (!success && !timedOut) {
    const fault = await infrastructureFault(member, exitCode, state, context);
    if (fault) {
      logger.warn({ exitCode, durationMs, fault: fault.fault, reason: fault.message }, "run cut short by the infrastructure");
      throw fault;
    }
  }
  const output = readOutputFiles(member.filesFrame(), limits.outputFiles);
  const errorSummary =
    !success && !timedOut && output.full
      ? `wrote more than ${mib(limits.outputFiles.spaceBytes)} MiB under /sandbox/out (the output space's size, SKILL_ENGINE_OUTPUT_SPACE_MB)`
      : summarizeRun({
          exitCode,
          stdout: stdoutText,
          stderrTail: member.stderr.tailText(),
          timedOut,
          oomKilled,
          timeoutMs: limits.timeoutMs,
          memoryBytes: limits.memoryBytes,
        });
  const fileWarnings =
    success && output.full
      ? [
          ...output.warnings,
          `the output space under /sandbox/out was full (${mib(limits.outputFiles.spaceBytes)} MiB): a file may be incomplete`,
        ]
      : output.warnings;
  logger.debug({ exitCode, durationMs, timedOut, oomKilled }, "sandbox run finished");
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
    ...(output.files.length > 0 ? { outputFiles: output.files } : {}),
    ...(fileWarnings.length > 0 ? { fileWarnings } : {}),
  };
}

function mib(bytes: number): string {
  return String(Math.round((bytes / (1024 * 1024)) * 10) / 10);
}

/** Waits for the container to exit, killing it on timeout or cancellation. */
async function awaitExit(
  member: SandboxContainer,
  exit: Promise<number>,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<{ exitCode: number; timedOut: boolean; cancelled: boolean }> {
  let timedOut = false;
  let cancelled = false;
  let giveUp: NodeJS.Timeout | undefined;
  let engineSilent: ((error: Error) => void) | undefined;
  const silence = new Promise<never>((_, reject) => (engineSilent = reject));
  // After a kill the engine must confirm the stop; one that never does (gone mid-call, frozen)
  // must not hold the run, its caller and the service's shutdown forever.
  const kill = (): void => {
    member.container.kill();
    giveUp ??= setTimeout(() => {
      engineSilent?.(
        new SandboxUnavailableError(
          `the Docker engine did not confirm within ${KILL_CONFIRM_MS} ms that the run's container stopped; the result is not the skill's; retry`,
          "engine-unreachable",
        ),
      );
    }, KILL_CONFIRM_MS);
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
    const exitCode = await Promise.race([exit, silence]);
    return { exitCode, timedOut, cancelled };
  } catch (error) {
    // A cancelled run stays a cancellation, whatever the engine did meanwhile.
    if (cancelled) return { exitCode: -1, timedOut, cancelled };
    throw error;
  } finally {
    clearTimeout(timer);
    if (giveUp) clearTimeout(giveUp);
    signal.removeEventListener("abort", onAbort);
  }
}

/**
 * The engine learns of OOM kills through an event that can arrive after the exit: when the
 * process died of SIGKILL that we did not send, ask again for a short while before saying no.
 * The watch's own `oom` events count too, so a child killed by the OOM killer is reported even
 * when the skill itself went on and exited 0 before the engine's flag was set.
 */
async function containerState(
  member: SandboxContainer,
  exitCode: number,
  faults: FaultProbe,
): Promise<{ gone: boolean; oomKilled: boolean }> {
  // An exit below 128 is the process's own: it was not killed, so the container was neither
  // removed nor OOM-killed under it, and the engine's inspect would only repeat what the watch's
  // `oom` events already say about a child (docs/performance.md#no-inspect-after-a-clean-exit).
  // Skipping it saves an engine call on nearly every run.
  if (Number.isInteger(exitCode) && exitCode >= 0 && exitCode < SIGNAL_EXIT_BASE && faults.watch.mark().connected) {
    // One pass of the event loop's poll phase first (two immediates, well under a millisecond):
    // an `oom` event already in the socket is read before the flag is looked at. Waiting for the
    // container's `die` event would make it final but costs ~30 ms a run.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    return { gone: false, oomKilled: faults.watch.oomSeen(member.container.id) };
  }
  const attempts = exitCode === SIGKILL_EXIT_CODE ? OOM_FLAG_ATTEMPTS : 1;
  for (let attempt = 1; ; attempt++) {
    const state = await member.container.state();
    const oomKilled = state.oomKilled || faults.watch.oomSeen(member.container.id);
    if (state.gone || oomKilled || attempt >= attempts) return { gone: state.gone, oomKilled };
    await delay(OOM_FLAG_RETRY_MS);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
