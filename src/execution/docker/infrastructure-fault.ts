import { setTimeout as sleep } from "node:timers/promises";
import { SandboxUnavailableError } from "../../errors/index.js";
import type { DockerEngineClient } from "./docker-engine-client.js";
import type { EngineWatch } from "./engine-watch.js";
import type { RunDirectories } from "./run-directories.js";
import type { SandboxContainer } from "./sandbox-container.js";

/** What the judgement needs: the engine (to ask whether it still answers) and its event watch. */
export interface FaultProbe {
  readonly engine: DockerEngineClient;
  readonly watch: EngineWatch;
}

/** Exit codes from 128 up mean the skill's process died of a signal (128 + its number). */
const SIGNAL_EXIT_BASE = 128;
/**
 * How long a signal death waits for the engine's word: its kill event, or its event stream ending
 * (an engine shutting down stops every container with SIGTERM, and may close the stream only a
 * moment after the containers' exits reached us). A skill that kills itself pays this once.
 */
const KILL_EVENT_WAIT_MS = 2_000;
const KILL_EVENT_POLL_MS = 25;

/**
 * Whether a failed run (not timed out, not cancelled) failed because of the infrastructure
 * rather than the skill, and if so which fault (docs/skill-lifecycle.md#what-counts-against-a-skill):
 *
 * 1. the container is gone (removed from outside);
 * 2. the engine's event stream was lost during the run (the engine stopped or restarted);
 * 3. the process died of a signal and the engine reported a kill of the container, which the
 *    service never sends outside timeouts and cancellations (an engine shutdown's SIGTERM,
 *    `docker stop`, `docker kill`);
 * 4. the engine no longer answers;
 * 5. the run directory was wiped meanwhile, or a wipe is still walking through it (the skill may
 *    have died of its file vanishing).
 *
 * Undefined means the failure is the skill's own: its exit code, an OOM kill, no output.
 */
export async function infrastructureFault(
  member: SandboxContainer,
  exitCode: number,
  state: { gone: boolean; oomKilled: boolean },
  context: { faults: FaultProbe; runDirectories: RunDirectories },
): Promise<SandboxUnavailableError | undefined> {
  const { engine, watch } = context.faults;
  if (state.gone) {
    return new SandboxUnavailableError(
      "the run's container was removed from outside while it ran; the result is not the skill's; retry",
      "container-lost",
    );
  }
  if (watch.outageSince(member.engineMark)) {
    return new SandboxUnavailableError(
      "the Docker engine went away while this run was in flight (stopped or restarted), so its result is not the skill's; retry once the engine is back",
      "engine-unreachable",
    );
  }
  if (!Number.isInteger(exitCode) || (exitCode >= SIGNAL_EXIT_BASE && !state.oomKilled)) {
    const signal = await killSignalOf(watch, member);
    if (signal === OUTAGE) {
      return new SandboxUnavailableError(
        "the Docker engine went away while this run was in flight (stopped or restarted), so its result is not the skill's; retry once the engine is back",
        "engine-unreachable",
      );
    }
    if (signal !== undefined) {
      return new SandboxUnavailableError(
        `the run's container was stopped from outside (signal ${signal}: an engine shutdown, docker stop or docker kill), so its result is not the skill's; retry`,
        "container-lost",
      );
    }
  }
  try {
    await engine.ping();
  } catch (error) {
    if (error instanceof SandboxUnavailableError) return error;
    throw error;
  }
  if (!(await context.runDirectories.intact(member.runId))) {
    return new SandboxUnavailableError(
      "the sandbox directory was wiped while this run was in flight, so its result is not the skill's; retry",
      "sandbox-wiped",
    );
  }
  return undefined;
}

const OUTAGE = Symbol("engine outage");

/**
 * The kill the engine reported for the container, or {@link OUTAGE} when the engine's event stream
 * broke meanwhile, waiting up to {@link KILL_EVENT_WAIT_MS} for either to arrive.
 */
async function killSignalOf(watch: EngineWatch, member: SandboxContainer): Promise<string | typeof OUTAGE | undefined> {
  if (!watch.mark().connected) return undefined;
  for (let waited = 0; ; waited += KILL_EVENT_POLL_MS) {
    const signal = watch.killSignal(member.container.id);
    if (signal !== undefined) return signal;
    if (watch.outageSince(member.engineMark)) return OUTAGE;
    if (waited >= KILL_EVENT_WAIT_MS) return undefined;
    await sleep(KILL_EVENT_POLL_MS);
  }
}
