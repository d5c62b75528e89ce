/** The domain's error kinds (no transport knows them here; src/grpc maps them to statuses). The only way in. */
export {
  AlreadyExistsError,
  type CancellationReason,
  ConflictError,
  type ErrorKind,
  type InfrastructureFault,
  FailedPreconditionError,
  InternalError,
  InvalidArgumentError,
  NotFoundError,
  PermissionDeniedError,
  QueueFullError,
  ResourceExhaustedError,
  RunCancelledError,
  SandboxUnavailableError,
  SkillEngineError,
  SkillNotFoundError,
  SkillTestFailedError,
  SkillVersionNotFoundError,
  UnauthenticatedError,
  UnavailableError,
} from "./domain-errors.js";
export { errorMessage } from "./error-message.js";
