import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { CallContext, ControlPlane, SkillVisibility } from "../control/index.js";
import type { SkillBundles, SkillSources } from "../sources/index.js";
import { InvalidArgumentError } from "../errors/index.js";
import { RouteMode, ToolFormat } from "../gen/skillengine/v1/routing.js";
import { type SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { Visibility } from "../gen/skillengine/v1/skills.js";
import type { Authenticator } from "../identity/index.js";
import type { ServiceMetrics } from "../observability/index.js";
import type { LearningService } from "../learning/index.js";
import type { RoutingService } from "../routing/index.js";
import type { SecretsService } from "../secrets/index.js";
import {
  fromHardeningMessage,
  fromOnDuplicateMessage,
  fromOnFailureMessage,
  toSimilarSkillMessage,
  fromVisibilityMessage,
  toOutputFileMessage,
  toStepResultMessage,
  toExecutionResultMessage,
  toGatedChangeMessage,
  toGrantMessage,
  toRoutedSkillMessage,
  toSkillMessage,
  toSkillMessageFor,
  toStatsMessage,
  toVersionMessage,
} from "./messages.js";
import { environmentHandlers } from "./environment-handlers.js";
import { sharingHandlers } from "./sharing-handlers.js";
import { skillSourceHandlers } from "./source-handlers.js";
import { learningHandlers } from "./learning-handlers.js";
import { retirementHandlers } from "./retirement-handlers.js";
import { secretHandlers } from "./secret-handlers.js";
import { jsonTextOf } from "./json-fields.js";
import { unaryHandler } from "./unary-call.js";

/** The SkillEngine service: maps messages to use cases and errors to statuses, nothing else. */
export function skillEngineHandlers(
  control: ControlPlane,
  routing: RoutingService,
  authenticator: Authenticator,
  logger: Logger,
  metrics: ServiceMetrics | undefined,
  folders: { readonly sources: SkillSources; readonly bundles: SkillBundles },
  learning: LearningService,
  secrets: SecretsService,
): SkillEngineServer {
  return {
    ...learningHandlers(learning, { authenticator, logger, ...(metrics ? { metrics } : {}) }),
    registerSkill: unary(logger, "RegisterSkill", async (request, context) => {
      const registered = await control.registration.register(
        {
          name: request.name,
          description: request.description,
          // Text or structure, one of them (docs/api.md#json-as-structures).
          parametersSchema: jsonTextOf("parameters_schema", request.parametersSchema, request.parametersSchemaJson),
          code: request.code,
          testPayload: jsonTextOf("test_payload", request.testPayload, request.testPayloadJson),
          exampleQueries: request.exampleQueries,
          visibility: requestedVisibility(request.visibility, { required: false }),
          dependsOn: request.dependsOn,
          system: request.system,
          onDuplicate: fromOnDuplicateMessage(request.onDuplicate),
          requirements: request.requirements,
          systemPackages: request.systemPackages,
          testFiles: request.testFiles,
          secrets: request.secrets,
          networkAllow: request.networkAllow,
        },
        context,
      );
      return toGatedChangeMessage(registered);
    }),

    patchSkill: unary(logger, "PatchSkill", async (request, context) => {
      const patched = await control.patching.patch(
        { name: request.name, find: request.find, replace: request.replace, testPayload: request.testPayload },
        context,
      );
      return toGatedChangeMessage(patched);
    }),

    invokeSkill: unary(logger, "InvokeSkill", async (request, context) => {
      const key = request.idempotencyKey;
      const invoked = await control.invocation.invoke(
        {
          name: request.name,
          payload: jsonTextOf("payload", request.payload, request.payloadJson),
          routeId: request.routeId,
          files: request.files,
        },
        key ? { ...context, idempotencyKey: key } : context,
      );
      return {
        result: toExecutionResultMessage(invoked.result),
        version: invoked.version,
        steps: invoked.steps.map(toStepResultMessage),
        warnings: invoked.warnings,
        invocationId: invoked.invocationId ?? "",
        files: (invoked.result.outputFiles ?? []).map(toOutputFileMessage),
      };
    }),

    getSkill: unary(logger, "GetSkill", async (request, context) => {
      const found = await control.queries.get({ name: request.name }, context);
      const testFiles = await control.queries.testFiles({ name: request.name }, context);
      return {
        skill: toSkillMessageFor(context.caller)(found.skill),
        code: found.code,
        composed: found.kind === "composed",
        dependsOn: [...found.dependsOn],
        kind: found.folder?.kind ?? found.kind,
        skillId: found.folder?.skillId ?? "",
        testFiles,
      };
    }),

    listSkills: unary(logger, "ListSkills", async (request, context) => {
      const page = control.queries.listPage(
        {
          includeInactive: request.includeInactive,
          ...(request.owner === "" ? {} : { owner: request.owner }),
          pageSize: request.pageSize,
          pageToken: request.pageToken,
        },
        context,
      );
      return { skills: page.items.map(toSkillMessageFor(context.caller)), nextPageToken: page.nextPageToken };
    }),

    listSkillVersions: unary(logger, "ListSkillVersions", async (request, context) => {
      const { skill, versions } = control.queries.versionsPage(
        { name: request.name, pageSize: request.pageSize, pageToken: request.pageToken },
        context,
      );
      return { versions: versions.items.map((v) => toVersionMessage(v, skill.version)), nextPageToken: versions.nextPageToken };
    }),

    getSkillStats: unary(logger, "GetSkillStats", async (request, context) =>
      toStatsMessage(control.queries.stats({ name: request.name }, context)),
    ),

    rollbackSkill: unary(logger, "RollbackSkill", async (request, context) => ({
      skill: toSkillMessage(await control.patching.rollback({ name: request.name, version: request.version }, context)),
    })),

    deleteSkill: unary(logger, "DeleteSkill", async (request, context) => {
      const deleted = await control.lifecycle.deleteReport({ name: request.name, force: request.force }, context);
      return { skill: toSkillMessage(deleted.skill), revokedGrants: deleted.revokedGrants.map(toGrantMessage) };
    }),

    restoreSkill: unary(logger, "RestoreSkill", async (request, context) => {
      const restored = await control.lifecycle.restoreReport({ name: request.name }, context);
      return { skill: toSkillMessage(restored.skill), evicted: restored.evicted };
    }),

    setSkillProtected: unary(logger, "SetSkillProtected", async (request, context) => ({
      skill: toSkillMessage(await control.lifecycle.setProtected({ name: request.name, pinned: request.protected }, context)),
    })),

    setSkillVisibility: unary(logger, "SetSkillVisibility", async (request, context) => ({
      skill: toSkillMessage(
        await control.access.setVisibility(
          { name: request.name, visibility: requestedVisibility(request.visibility, { required: true }) as SkillVisibility },
          context,
        ),
      ),
    })),

    transferSkill: unary(logger, "TransferSkill", async (request, context) => ({
      skill: toSkillMessage(await control.access.transfer({ name: request.name, newOwner: request.newOwner }, context)),
    })),

    whoAmI: unary(logger, "WhoAmI", async (_request, context) => ({
      agentId: context.caller.agentId,
      admin: context.caller.admin,
      authenticated: context.caller.authenticated,
    })),

    rebuildIndexes: unary(logger, "RebuildIndexes", async (_request, context) => {
      const started = performance.now();
      const report = await control.operations.rebuildIndexes(context);
      return { skillsIndexed: report.skillsIndexed, repairs: report.repairs, durationMs: Math.round(performance.now() - started) };
    }),

    retireDegradedSkills: unary(logger, "RetireDegradedSkills", async (request, context) => {
      const { retired, kept } = await control.retirementSweep.sweep({ dryRun: request.dryRun, force: request.force }, context);
      return { retired: retired.map((r) => ({ name: r.name, reasons: r.reasons })), dryRun: request.dryRun, kept };
    }),

    registerComposedSkill: unary(logger, "RegisterComposedSkill", async (request, context) => {
      const registered = await control.composedRegistration.register(
        {
          name: request.name,
          description: request.description,
          parametersSchema: request.parametersSchema,
          steps: request.steps.map((step, index) => {
            const onFailure = fromOnFailureMessage(step.onFailure);
            if (!onFailure) throw new InvalidArgumentError(`steps[${index}].on_failure`, "must be ON_FAILURE_STOP or ON_FAILURE_CONTINUE");
            return { id: step.id, skill: step.skill, args: step.args, when: step.when, onFailure };
          }),
          output: request.output,
          testPayload: request.testPayload,
          exampleQueries: request.exampleQueries,
          visibility: requestedVisibility(request.visibility, { required: false }),
          onDuplicate: fromOnDuplicateMessage(request.onDuplicate),
        },
        context,
      );
      return {
        skill: toSkillMessage(registered.skill),
        // An identical registration ran nothing (docs/skill-lifecycle.md#identical-registrations).
        test: registered.test ? toExecutionResultMessage(registered.test) : undefined,
        steps: (registered.steps ?? []).map(toStepResultMessage),
        evicted: registered.evicted,
        similarSkills: (registered.similarSkills ?? []).map(toSimilarSkillMessage),
        unchanged: registered.unchanged === true,
      };
    }),

    getSkillDependencies: unary(logger, "GetSkillDependencies", async (request, context) => {
      const report = control.queries.dependencies({ name: request.name }, context);
      return {
        dependsOn: [...report.dependsOn],
        dependents: [...report.dependents],
        loadOrder: [...report.loadOrder],
        warnings: [...report.warnings],
      };
    }),

    ...retirementHandlers(control.lifecycle, (method, handler) => unary(logger, method, handler)),

    routeSkills: unary(logger, "RouteSkills", async (request, context) => {
      const format = request.format === ToolFormat.TOOL_FORMAT_ANTHROPIC ? "anthropic" : "openai";
      const mode =
        request.mode === RouteMode.ROUTE_MODE_KEYWORDS
          ? "keywords"
          : request.mode === RouteMode.ROUTE_MODE_VECTORS
            ? "vectors"
            : request.mode === RouteMode.ROUTE_MODE_RRF
              ? "rrf"
              : "fused";
      const routed = await routing.route(
        {
          query: request.query,
          limit: request.limit,
          mode,
          format,
          minRelevance: request.minRelevance,
          hardening: fromHardeningMessage(request.hardening),
        },
        context.caller,
      );
      return {
        routeId: routed.routeId,
        skills: routed.skills.map(toRoutedSkillMessage),
        degraded: routed.degraded,
        warnings: routed.warnings,
        noFit: routed.noFit,
      };
    }),

    recordRouteFeedback: unary(logger, "RecordRouteFeedback", async (request, context) => ({
      credited: await routing.recordFeedback(
        { routeId: request.routeId, name: request.name, success: request.success, fallback: request.fallback ?? false },
        context,
      ),
    })),

    resetSkillQuality: unary(logger, "ResetSkillQuality", async (request, context) => {
      const reset = routing.resetQuality({ name: request.name }, context);
      return {
        skill: toSkillMessage(reset.skill),
        routedSelections: reset.routed.selections,
        routedCompletions: reset.routed.completions,
        ...reset.quality,
      };
    }),

    wipeSandbox: unary(logger, "WipeSandbox", async (_request, context) => ({
      removedRunDirectories: await control.operations.wipeSandbox(context),
    })),

    // Skill folders (docs/skill-sources.md), GetCatalog included: one catalog.
    ...skillSourceHandlers(folders.sources, folders.bundles, control.queries, {
      authenticator,
      logger,
      ...(metrics ? { metrics } : {}),
    }),
    ...sharingHandlers(control.access.sharing, { authenticator, logger, ...(metrics ? { metrics } : {}) }),
    ...environmentHandlers(control.environments, { authenticator, logger, ...(metrics ? { metrics } : {}) }),
    ...secretHandlers(secrets, { authenticator, logger, ...(metrics ? { metrics } : {}) }),
  };

  /** The shared wrapper (unary-call.ts), with the skill's name and version in the rpc log line. */
  function unary<Req, Res>(
    log: Logger,
    method: string,
    handler: (request: Req, context: CallContext) => Promise<Res>,
  ): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
    return unaryHandler({ authenticator, logger: log, ...(metrics ? { metrics } : {}) }, method, handler, (request, response) => ({
      skill: (request as { name?: unknown }).name,
      version: versionOf(response),
    }));
  }
}

/** The skill version a response names (InvokeSkill's `version`, or that of its `skill`), for the log line. */
function versionOf(response: unknown): number | undefined {
  if (typeof response !== "object" || response === null) return undefined;
  const { version, skill } = response as { version?: unknown; skill?: { version?: unknown } };
  if (typeof version === "number" && version > 0) return version;
  return typeof skill?.version === "number" && skill.version > 0 ? skill.version : undefined;
}

/** A visibility from the wire: unspecified is undefined (or INVALID_ARGUMENT when one is required). */
function requestedVisibility(visibility: Visibility, options: { required: boolean }): SkillVisibility | undefined {
  const domain = fromVisibilityMessage(visibility);
  if (domain !== undefined) return domain;
  if (visibility === Visibility.VISIBILITY_UNSPECIFIED && !options.required) return undefined;
  throw new InvalidArgumentError(
    "visibility",
    "must be VISIBILITY_PRIVATE or VISIBILITY_PUBLIC (a skill becomes internal by GrantSkill, not by asking)",
  );
}
