import path from "node:path";
import type { Logger } from "pino";
import {
  type EgressConnection,
  type EgressLimits,
  type HostPattern,
  type MappedAddress,
  openRunGateway,
  parseHostPattern,
  type RunGateway,
} from "../../egress/index.js";
import { SandboxUnavailableError } from "../../errors/index.js";
import type { ExecutionResult } from "../sandbox-runner.js";
import { CONTAINER_CODE_DIR, type RunDirectories } from "./run-directories.js";

/** The deployment's side of every run's way out (docs/security.md#egress). */
export interface EgressSettings {
  /** SKILL_ENGINE_EGRESS_HOST_MAP: the only way to a loopback or private address. */
  readonly hostMap: ReadonlyMap<string, MappedAddress>;
  readonly limits: EgressLimits;
  /** Every connection once it ends, with the skill it was for (metrics). */
  readonly onConnection?: (connection: EgressConnection, skill: string) => void;
}

/** The gateway's socket in the run directory, and where the container sees it. */
const SOCKET_NAME = "egress.sock";
export const CONTAINER_EGRESS_SOCKET = `${CONTAINER_CODE_DIR}/${SOCKET_NAME}`;

/**
 * Opens the run's gateway on a socket in its own directory, when the run declared hosts; undefined
 * otherwise (the run has no network at all). Only this run's container sees that directory, so no
 * other run can reach the socket. A directory wiped before the gateway listens is a wipe.
 */
export async function openEgressFor(
  run: { readonly runId: string; readonly skillName: string; readonly networkAllow?: readonly string[] | undefined },
  context: { readonly runDirectories: RunDirectories; readonly logger: Logger; readonly egress?: EgressSettings | undefined },
): Promise<RunGateway | undefined> {
  const declared = run.networkAllow ?? [];
  if (declared.length === 0) return undefined;
  const { egress } = context;
  if (!egress) {
    throw new SandboxUnavailableError(
      "this execution plane has no egress gateway configured, so a skill that declares network_allow cannot run here",
      "engine-error",
    );
  }
  const allowed: HostPattern[] = [];
  for (const entry of declared) {
    const parsed = parseHostPattern(entry);
    // The control plane checked every entry at registration; one that no longer parses is dropped, never widened.
    if (typeof parsed !== "string") allowed.push(parsed);
  }
  try {
    return await openRunGateway({
      socketPath: path.join(context.runDirectories.pathOf(run.runId), SOCKET_NAME),
      runId: run.runId,
      skill: run.skillName,
      allowed,
      hostMap: egress.hostMap,
      limits: egress.limits,
      logger: context.logger,
      ...(egress.onConnection ? { onConnection: (connection) => egress.onConnection?.(connection, run.skillName) } : {}),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") {
      throw new SandboxUnavailableError(
        "the sandbox directory was wiped while this run was being prepared, so its result is not the skill's; retry",
        "sandbox-wiped",
      );
    }
    throw error;
  }
}

/** The result with what the gateway refused or cut off during the run. */
export function withNetworkWarnings(result: ExecutionResult, gateway: RunGateway | undefined): ExecutionResult {
  const refusals = gateway?.refusals() ?? [];
  return refusals.length > 0 ? { ...result, networkWarnings: refusals } : result;
}
