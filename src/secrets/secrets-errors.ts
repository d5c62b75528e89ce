import { NotFoundError } from "../errors/index.js";

/** The setting that names the key file: every message about the key names it, so the operator knows what to fix. */
export const KEY_FILE_SETTING = "SKILL_ENGINE_SECRETS_KEY_FILE";

/**
 * The secrets store or its key file cannot be used (docs/security.md#the-store): an unsafe or malformed key file, a
 * key that does not open the store, a store changed outside the service. An operator's mistake, reported at
 * start-up without a stack trace, exit code 2; the message names {@link KEY_FILE_SETTING} or the store's file.
 */
export class SecretsStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SecretsStoreError";
  }
}

/** The calling agent has no secret of that name (another agent's secret of the same name is not its). */
export class SecretNotFoundError extends NotFoundError {
  constructor(
    readonly agentId: string,
    readonly secretName: string,
  ) {
    super(`no secret named ${secretName} is set for agent ${agentId}`);
  }
}
