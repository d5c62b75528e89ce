import { performance } from "node:perf_hooks";
import type { EnvironmentOperations, EnvironmentRebuildOutcome, EnvironmentView } from "../control/index.js";
import { type Environment, EnvironmentRebuildResult, EnvironmentStatus } from "../gen/skillengine/v1/environments.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

/** The environments' RPCs on the SkillEngine service (docs/packages.md#operators): messages to use cases, nothing else. */
export function environmentHandlers(
  environments: EnvironmentOperations,
  deps: UnaryDependencies,
): Pick<SkillEngineServer, "listEnvironments" | "rebuildEnvironments" | "checkRuntimes"> {
  return {
    listEnvironments: unaryHandler(deps, "ListEnvironments", async (request, context) => {
      const page = await environments.listPage(request, context);
      return { environments: page.items.map(toEnvironmentMessage), nextPageToken: page.nextPageToken };
    }),

    rebuildEnvironments: unaryHandler(deps, "RebuildEnvironments", async (request, context) => {
      const started = performance.now();
      const outcomes = await environments.rebuild({ missingOnly: request.missingOnly }, context);
      return {
        environments: outcomes.map((outcome) => ({ id: outcome.id, result: REBUILD_RESULT[outcome.result], error: outcome.error ?? "" })),
        durationMs: Math.round(performance.now() - started),
      };
    }),

    checkRuntimes: unaryHandler(deps, "CheckRuntimes", async (_request, context) => {
      const report = await environments.checkRuntimes(context);
      return {
        sandboxPython: report.sandboxPython ?? "",
        installerPython: report.installerPython ?? "",
        pip: report.pip ?? "",
        pythonMatches: report.pythonMatches,
        packageSource: { ...report.packageSource },
        debian: { ...report.debian },
      };
    }),
  };
}

const STATUS: Readonly<Record<EnvironmentView["status"], EnvironmentStatus>> = {
  ready: EnvironmentStatus.ENVIRONMENT_STATUS_READY,
  missing: EnvironmentStatus.ENVIRONMENT_STATUS_MISSING,
  failed: EnvironmentStatus.ENVIRONMENT_STATUS_FAILED,
};

const REBUILD_RESULT: Readonly<Record<EnvironmentRebuildOutcome["result"], EnvironmentRebuildResult>> = {
  rebuilt: EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_REBUILT,
  skipped: EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_SKIPPED,
  failed: EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_FAILED,
};

function toEnvironmentMessage(environment: EnvironmentView): Environment {
  return {
    id: environment.id,
    requirements: [...environment.requirements],
    systemPackages: [...environment.systemPackages],
    lock: (environment.lock ?? []).map((entry) => ({ ...entry })),
    sizeBytes: environment.sizeBytes,
    skills: environment.skills,
    builtAt: environment.builtAt,
    status: STATUS[environment.status],
    error: environment.error,
    lastUsedAt: environment.lastUsedAt,
  };
}
