/** The gRPC layer: wire mapping, health and reflection. The only way in. */
export {
  loadServerCredentials,
  SKILL_ENGINE_SERVICE_NAME,
  startGrpcServer,
  TlsFilesError,
  type GrpcServerOptions,
  type RunningGrpcServer,
} from "./server.js";
export { PLAYBOOK_SERVICE_NAME } from "./playbook-handlers.js";
