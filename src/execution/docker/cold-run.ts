import { SandboxUnavailableError } from "../../errors/index.js";
import { handOver } from "./hand-over.js";
import { asRunFailure, type RunStrategyContext, runLogger } from "./run-context.js";
import { RunDirectoryVanishedError } from "./sandbox-container.js";
import { cancellationOf, type ExecutionResult, type SandboxRunRequest } from "../sandbox-runner.js";

/** Attempts to prepare a cold run when an operator wipes the sandbox directory under our feet. */
const PREPARE_ATTEMPTS = 5;

/**
 * Starts a fresh container for the job (its skill file already in its run directory), hands it
 * the payload on stdin as a warm container gets it, and waits. Wiping the sandbox directory is allowed
 * at any time: a wipe before the skill started is invisible to the caller (the run is prepared
 * again); one that cuts a run off mid-way is a clear UNAVAILABLE, never a failure blamed on the skill.
 */
export async function runCold(request: SandboxRunRequest, signal: AbortSignal, context: RunStrategyContext): Promise<ExecutionResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await runColdOnce(request, signal, context);
    } catch (error) {
      // A full or read-only sandbox disk while preparing is the host's fault (docker-errors.ts).
      if (!(error instanceof RunDirectoryVanishedError)) throw asRunFailure(error, context.image, "prepare a sandbox run");
      if (attempt >= PREPARE_ATTEMPTS) {
        throw new SandboxUnavailableError(
          "the sandbox directory kept disappearing while the run was being prepared; retry once the wipe is over",
          "sandbox-wiped",
        );
      }
      context.logger.warn({ skill: request.skillName, attempt }, "run directory vanished before start; preparing again");
    }
  }
}

async function runColdOnce(request: SandboxRunRequest, signal: AbortSignal, context: RunStrategyContext): Promise<ExecutionResult> {
  if (signal.aborted) throw cancellationOf(signal);
  const member = await context.prepareCold(request);
  const logger = runLogger(context.logger, member.runId, request, "cold");
  try {
    return await handOver(member, request, signal, { ...context, logger });
  } catch (error) {
    throw asRunFailure(error, context.image, "run a sandbox container");
  } finally {
    // Removed in the background, as a warm run's container is: the caller has its answer now.
    await context.destroyLater(member);
  }
}
