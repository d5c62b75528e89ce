import { handOver } from "./hand-over.js";
import { asRunFailure, type RunStrategyContext, runLogger } from "./run-context.js";
import type { SandboxContainer } from "./sandbox-container.js";
import { cancellationOf, type ExecutionResult, type SandboxRunRequest } from "../sandbox-runner.js";

/**
 * Hands the job to a waiting container: writes the skill file into its (read-only to the
 * container) run directory, and hands the job over (hand-over.ts). Undefined when the container
 * turned out unusable before the job started (its run directory was wiped while it waited): the
 * caller then starts one cold. The container is removed in the background after the answer, off the hot path.
 */
export async function runWarm(
  member: SandboxContainer,
  request: SandboxRunRequest,
  signal: AbortSignal,
  context: RunStrategyContext,
): Promise<ExecutionResult | undefined> {
  const logger = runLogger(context.logger, member.runId, request, "warm");
  try {
    if (signal.aborted) throw cancellationOf(signal);
    const handedOver = await context.runDirectories
      .writeSkill(member.runId, request.code, request.files, request.folder, request.inputFiles)
      .then(
        () => true,
        (error: unknown) => {
          if ((error as NodeJS.ErrnoException).code === "ENOENT") return false;
          throw error;
        },
      );
    if (!handedOver) {
      logger.debug("warm container's run directory was wiped while it waited; starting cold");
      return undefined;
    }
    return await handOver(member, request, signal, { ...context, logger });
  } catch (error) {
    throw asRunFailure(error, context.image, "run a warm sandbox container");
  } finally {
    await context.destroyLater(member);
  }
}
