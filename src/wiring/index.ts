/**
 * The wiring of each plane, one module a plane, called in order by the composition root (src/app.ts):
 * config → stores → planes → server. The only way in.
 */
export {
  checkComposedSkills,
  checkMandatoryAfterScan,
  closeControlStores,
  type ControlStores,
  createUseCases,
  openControlStores,
  startIntake,
  startRetirementSweep,
} from "./control-plane.js";
export {
  ENVIRONMENT_SWEEP_EVERY_MS,
  type EnvironmentSweep,
  type EnvironmentsPlane,
  startEnvironments,
  startEnvironmentSweep,
} from "./environments-plane.js";
export { connectBus, createExecutionPlane, instanceTagOf, keepEngineInService } from "./execution-plane.js";
export { createDuplicateScreen, startLearning } from "./learning-plane.js";
export { type PrivateSocket, privateSocketFor, startMcpDoor } from "./mcp-door.js";
export { attachServiceGauges, ServingState, startMetricsPort } from "./observability.js";
export { type PlaybookPlane, startLessonPruneSweep, startPlaybook, startPlaybookPlane } from "./playbook-plane.js";
export { startRouting, withQdrant } from "./routing-plane.js";
export { createSecretsService, openSecretStore } from "./secrets-plane.js";
export { ShutdownGrace, type DrainOutcome } from "./shutdown.js";
export { type FolderStores, instructionsRegistrar, openFolderStores, startSkillSources, watchSkillFolders } from "./sources-plane.js";
