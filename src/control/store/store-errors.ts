import { errorMessage, InternalError, ResourceExhaustedError, SkillEngineError, UnavailableError } from "../../errors/index.js";

/** A full disk or quota under SKILL_ENGINE_HOME. */
const FULL_CODES = new Set(["ENOSPC", "EDQUOT"]);
/** A file system turned read-only, or files the service may no longer write. */
const READ_ONLY_CODES = new Set(["EROFS", "EACCES", "EPERM"]);

/**
 * The one place where file-system failures of the canonical store become domain errors: a full
 * disk → resource exhausted, a read-only one → unavailable, both saying what to do; anything
 * else → internal (docs/operations.md#full-disks-and-a-locked-registry). Domain errors pass through.
 */
export function fromStoreError(error: unknown, action: string): SkillEngineError {
  if (error instanceof SkillEngineError) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "";
  if (FULL_CODES.has(code)) {
    return new ResourceExhaustedError(
      `the disk under SKILL_ENGINE_HOME is full (${code}); could not ${action}; nothing was changed: free space and retry`,
      { cause: error },
    );
  }
  if (READ_ONLY_CODES.has(code)) {
    return new UnavailableError(
      `SKILL_ENGINE_HOME cannot be written (${code}: a read-only file system or permissions); could not ${action}; nothing was changed: retry once it is writable`,
      { cause: error },
    );
  }
  return new InternalError(`could not ${action}: ${errorMessage(error)}`, { cause: error });
}
