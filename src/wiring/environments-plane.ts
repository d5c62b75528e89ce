import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import type { EnvironmentAdministration, SkillEnvironments } from "../control/index.js";
import { type EnvironmentEvents, Environments, normalizePackageDeclarations } from "../environments/index.js";
import { localSandboxImage } from "../execution/index.js";
import { EnvironmentMetrics, type ServiceMetrics } from "../observability/index.js";

/** How often unused environments are looked for (docs/packages.md#removal); once at start too. */
export const ENVIRONMENT_SWEEP_EVERY_MS = 3_600_000;

/** Environments of packages (docs/packages.md) and the ports the control plane's use cases reach them through. */
export interface EnvironmentsPlane {
  readonly environments: Environments;
  readonly port: SkillEnvironments;
  /** ListEnvironments, RebuildEnvironments, CheckRuntimes. */
  readonly admin: EnvironmentAdministration;
  /** The metrics' hooks; undefined without metrics. */
  readonly events: EnvironmentEvents | undefined;
}

/** The periodic removal of unused environments. */
export interface EnvironmentSweep {
  /** No sweep starts from now on; resolves when the one in progress (if any) has ended. */
  stop(): Promise<void>;
}

/**
 * Environments live under SKILL_ENGINE_HOME, in registry.db's `skill_environments` and on disk,
 * built on this host for the local Docker engine's sandbox image. Nothing is rebuilt at start: an
 * environment whose directory is gone is rebuilt on first use, or by RebuildEnvironments
 * (docs/packages.md#operators).
 */
export function startEnvironments(
  config: SkillEngineConfig,
  logger: Logger,
  db: Database.Database,
  instanceTag: string,
  metrics?: ServiceMetrics,
): EnvironmentsPlane {
  const events = metrics ? new EnvironmentMetrics(metrics.registry) : undefined;
  const environments = new Environments({
    db,
    home: config.home,
    settings: config.environments,
    image: localSandboxImage(config, instanceTag),
    logger: logger.child({ component: "environments" }),
    ...(events ? { events } : {}),
  });
  const port: SkillEnvironments = {
    async prepare(declared) {
      const ensured = await environments.ensure(declared);
      if (!ensured) return undefined;
      return {
        packages: { ...normalizePackageDeclarations(declared), environmentId: ensured.id },
        environment: { id: ensured.id, hostPath: ensured.hostPath, variables: ensured.containerEnv },
      };
    },
    async environmentOf(packages) {
      // A version's environment by its id (rebuilt from its lock when its directory was lost); one
      // this registry never recorded (a registry rebuilt from the canonical store) is built again
      // from the version's declaration.
      const ensured = await environments.ensureById(packages.environmentId).catch(async (error: unknown) => {
        const rebuilt = await environments.ensure(packages);
        if (!rebuilt) throw error;
        return rebuilt;
      });
      return { id: ensured.id, hostPath: ensured.hostPath, variables: ensured.containerEnv };
    },
  };
  // The service satisfies the operator's port as it is; the assignment checks that it still does.
  const admin: EnvironmentAdministration = environments;
  return { environments, port, admin, events };
}

/**
 * Removes the environments no skill version refers to once unused for
 * SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS (docs/packages.md#removal): at start, then every
 * ENVIRONMENT_SWEEP_EVERY_MS. Each sweep also reports the bytes of the ready environments, so the
 * gauge is right from the start, not only after the first build. Failures are logged; the next
 * sweep tries again.
 */
export function startEnvironmentSweep(
  config: SkillEngineConfig,
  logger: Logger,
  plane: EnvironmentsPlane,
  referencedIds: () => Iterable<string>,
): EnvironmentSweep {
  let running: Promise<void> | undefined;
  let stopped = false;
  const sweep = (): void => {
    if (running !== undefined || stopped) return;
    running = (async () => {
      await plane.environments.removeUnused(referencedIds(), config.environments.unusedGraceMs);
      const ready = (await plane.environments.list()).filter((environment) => environment.status === "ready");
      plane.events?.bytes?.(ready.reduce((sum, environment) => sum + environment.sizeBytes, 0));
    })()
      .catch((error: unknown) => logger.error({ err: error }, "environment sweep failed"))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(sweep, ENVIRONMENT_SWEEP_EVERY_MS);
  timer.unref();
  sweep();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      return running ?? Promise.resolve();
    },
  };
}
