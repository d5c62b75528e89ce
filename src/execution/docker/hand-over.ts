import { performance } from "node:perf_hooks";
import { type FinishContext, finishRun } from "./finish-run.js";
import type { SandboxContainer } from "./sandbox-container.js";
import type { ExecutionResult } from "../sandbox-runner.js";
import { jobFrame } from "./container-entry.js";
import { CONTAINER_EGRESS_SOCKET, type EgressSettings, openEgressFor, withNetworkWarnings } from "./run-egress.js";

/**
 * Gives a started container its one job and waits for the answer; the same for warm and cold
 * containers. The payload and the run's secrets go in on stdin (container-entry.ts), so they never
 * appear on a command line or in the container's configuration; the run is over when the entry script's exit marker has come through both streams, or
 * when the container stops without one (killed, timed out, `os._exit`).
 */
export async function handOver(
  member: SandboxContainer,
  job: {
    readonly payload: string;
    readonly skillName: string;
    readonly secrets?: Readonly<Record<string, string>> | undefined;
    readonly networkAllow?: readonly string[] | undefined;
  },
  signal: AbortSignal,
  context: FinishContext & { readonly egress?: EgressSettings | undefined },
): Promise<ExecutionResult> {
  // A run that declared hosts gets its gateway before its job: the forwarder connects on demand.
  const gateway = await openEgressFor({ runId: member.runId, skillName: job.skillName, networkAllow: job.networkAllow }, context);
  try {
    return withNetworkWarnings(await runJob(member, job, signal, context, gateway !== undefined), gateway);
  } finally {
    await gateway?.close();
  }
}

async function runJob(
  member: SandboxContainer,
  job: { readonly payload: string; readonly secrets?: Readonly<Record<string, string>> | undefined },
  signal: AbortSignal,
  context: FinishContext,
  egress: boolean,
): Promise<ExecutionResult> {
  const startedAt = performance.now();
  let byMarker = false;
  const markerExit = member.markerExit.then((code) => {
    byMarker = true;
    return code;
  });
  const { outputFiles } = context.limits;
  member.attached.write(
    jobFrame(
      job.payload,
      member.nonce,
      { count: outputFiles.maxFiles, file: outputFiles.maxFileBytes, total: outputFiles.maxTotalBytes },
      job.secrets,
      egress ? CONTAINER_EGRESS_SOCKET : undefined,
    ),
  );
  const exit = Promise.race([markerExit, member.exited]);
  return finishRun(member, { exit, startedAt, outputComplete: () => byMarker }, signal, context);
}
