/**
 * Secrets of agents for their skills' runs (docs/security.md#secrets): the encrypted store, its key file and
 * rotation, the name and value rules, the use cases behind SetSecret, DeleteSecret, ListSecrets and
 * RotateSecretsKey, and the `SecretValues` seam runs read values through. The only way in.
 */
export { KEY_BYTES } from "./key-file.js";
export {
  MAX_SECRET_VALUE_BYTES,
  MAX_SECRETS_PER_AGENT,
  MIN_SECRET_VALUE_BYTES,
  SECRET_NAME_PATTERN,
  validateSecretName,
  validateSecretValue,
} from "./secret-rules.js";
export { KEY_FILE_SETTING, SecretNotFoundError, SecretsStoreError } from "./secrets-errors.js";
export {
  nextKeyFile,
  type RotationStep,
  type SecretInfo,
  SecretStore,
  type SecretStoreOptions,
  type SecretValues,
} from "./secret-store.js";
export {
  type ListedSecret,
  type SecretsContext,
  SecretsService,
  type SecretUses,
  type SkillSecretDeclaration,
  usedBy,
} from "./secrets-service.js";
export { STORE_FILE } from "./store-file.js";
