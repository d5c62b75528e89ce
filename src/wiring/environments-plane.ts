import type Database from "better-sqlite3";
import type { Logger } from "pino";
import type { SkillEngineConfig } from "../config/index.js";
import type { SkillEnvironments } from "../control/index.js";
import { Environments, normalizePackageDeclarations } from "../environments/index.js";
import { localSandboxImage } from "../execution/index.js";

/** Environments of packages (docs/packages.md) and the port the control plane's use cases reach them through. */
export interface EnvironmentsPlane {
  readonly environments: Environments;
  readonly port: SkillEnvironments;
}

/**
 * Environments live under SKILL_ENGINE_HOME, in registry.db's `skill_environments` and on disk,
 * built on this host for the local Docker engine's sandbox image.
 */
export function startEnvironments(
  config: SkillEngineConfig,
  logger: Logger,
  db: Database.Database,
  instanceTag: string,
): EnvironmentsPlane {
  const environments = new Environments({
    db,
    home: config.home,
    settings: config.environments,
    image: localSandboxImage(config, instanceTag),
    logger: logger.child({ component: "environments" }),
  });
  const port: SkillEnvironments = {
    async prepare(declared) {
      const ensured = await environments.ensure(declared);
      if (!ensured) return undefined;
      return {
        packages: { ...normalizePackageDeclarations(declared), environmentId: ensured.id },
        environment: { id: ensured.id, hostPath: ensured.hostPath },
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
      return { id: ensured.id, hostPath: ensured.hostPath };
    },
  };
  return { environments, port };
}
