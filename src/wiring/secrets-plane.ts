import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import type { ControlPlane } from "../control/index.js";
import { SecretStore, SecretsService } from "../secrets/index.js";

/**
 * The secrets store (docs/security.md#the-store), opened before registry.db so that a key that does not open it
 * (SecretsStoreError, exit code 2) stops the start before anything else is opened or changed.
 */
export function openSecretStore(config: SkillEngineConfig, logger: Logger): Promise<SecretStore> {
  return SecretStore.open({ home: config.home, keyFile: config.secretsKeyFile, logger: logger.child({ component: "secrets" }) });
}

/** The secrets' use cases; ListSecrets' `used_by` comes from the skills the caller can see, through the control plane. */
export function createSecretsService(store: SecretStore, control: ControlPlane): SecretsService {
  return new SecretsService(store, {
    declaredFor: ({ caller }) =>
      control.queries.list({ includeInactive: false }, { caller }).map((skill) => ({ skill: skill.name, secrets: skill.secrets })),
  });
}
