import { performance } from "node:perf_hooks";
import { type FinishContext, finishRun } from "./finish-run.js";
import type { SandboxContainer } from "./sandbox-container.js";
import type { ExecutionResult } from "../sandbox-runner.js";
import { jobFrame } from "./container-entry.js";

/**
 * Gives a started container its one job and waits for the answer; the same for warm and cold
 * containers. The payload goes in on stdin (container-entry.ts), so it never appears on a
 * command line; the run is over when the entry script's exit marker has come through both streams, or
 * when the container stops without one (killed, timed out, `os._exit`).
 */
export async function handOver(
  member: SandboxContainer,
  payload: string,
  signal: AbortSignal,
  context: FinishContext,
): Promise<ExecutionResult> {
  const startedAt = performance.now();
  let byMarker = false;
  const markerExit = member.markerExit.then((code) => {
    byMarker = true;
    return code;
  });
  const { outputFiles } = context.limits;
  member.attached.write(
    jobFrame(payload, member.nonce, { count: outputFiles.maxFiles, file: outputFiles.maxFileBytes, total: outputFiles.maxTotalBytes }),
  );
  const exit = Promise.race([markerExit, member.exited]);
  return finishRun(member, { exit, startedAt, outputComplete: () => byMarker }, signal, context);
}
