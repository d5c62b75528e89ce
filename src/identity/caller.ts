/** Who a call comes from, as the service established it. */
export interface Caller {
  readonly agentId: string;
  /** Admins see and manage every skill and may call the operator RPCs. */
  readonly admin: boolean;
  /** False when the service runs without tokens (everyone is the local agent). */
  readonly authenticated: boolean;
  /**
   * The end user the agent acts for (`x-user-id` metadata), set only for agents allowed to delegate
   * (docs/security.md#users-and-delegation); grants to that user apply to the call.
   */
  readonly userId?: string;
}

/** The identity every caller has when no tokens are configured (the embedded default). */
export const LOCAL_AGENT = "local";

export const LOCAL_CALLER: Caller = { agentId: LOCAL_AGENT, admin: true, authenticated: false };

/** Agent ids appear in logs, the registry and the mirror file: short, printable, unambiguous. */
export const AGENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

export function agentIdProblem(agentId: string): string | undefined {
  return AGENT_ID_PATTERN.test(agentId)
    ? undefined
    : `"${agentId.slice(0, 80)}" is not a valid agent id: 1–64 characters, letters, digits and . _ @ -, starting with a letter or digit`;
}

/** User ids come from the agent's end users: printable, no spaces, at most 128 characters. */
export const USER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$/;

export function userIdProblem(userId: string): string | undefined {
  return USER_ID_PATTERN.test(userId)
    ? undefined
    : `"${userId.slice(0, 80)}" is not a valid user id: 1–128 characters, letters, digits and . _ @ : + -, starting with a letter or digit`;
}

/** The service acting on its own (the periodic retirement sweep): admin, under its own name. */
export function serviceCaller(task: string): Caller {
  return { agentId: task, admin: true, authenticated: false };
}
