import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { Metadata, type sendUnaryData, type ServerErrorResponse, type ServerUnaryCall, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { CallContext, SkillService } from "../control/index.js";
import { SkillEngineError } from "../errors.js";
import { RouteMode, type SkillEngineServer, ToolFormat } from "../gen/skillengine/v1/skill_engine.js";
import type { ServiceMetrics } from "../observability/index.js";
import type { RoutingService } from "../routing/index.js";
import { LOCAL_AGENT, signalOf } from "./call-context.js";
import { toExecutionResultMessage, toRoutedSkillMessage, toSkillMessage, toStatsMessage, toVersionMessage, toWarningMessage } from "./messages.js";

/** The SkillEngine service: maps messages to use cases and errors to statuses, nothing else. */
export function skillEngineHandlers(
  service: SkillService,
  routing: RoutingService,
  logger: Logger,
  metrics?: ServiceMetrics,
): SkillEngineServer {
  const caller = LOCAL_AGENT;
  return {
    registerSkill: unary(logger, "RegisterSkill", async (request, context) => {
      const registered = await service.register(
        {
          name: request.name,
          description: request.description,
          parametersSchema: request.parametersSchema,
          code: request.code,
          testPayload: request.testPayload,
        },
        context,
        request.exampleQueries,
      );
      return {
        skill: toSkillMessage(registered.skill),
        test: toExecutionResultMessage(registered.test),
        normalizations: registered.normalizations,
        warnings: registered.warnings.map(toWarningMessage),
      };
    }),

    patchSkill: unary(logger, "PatchSkill", async (request, context) => {
      const patched = await service.patch(
        { name: request.name, find: request.find, replace: request.replace, testPayload: request.testPayload },
        context,
      );
      return {
        skill: toSkillMessage(patched.skill),
        test: toExecutionResultMessage(patched.test),
        normalizations: patched.normalizations,
        warnings: patched.warnings.map(toWarningMessage),
      };
    }),

    invokeSkill: unary(logger, "InvokeSkill", async (request, context) => {
      const invoked = await service.invoke(request.name, request.payload, context, request.routeId);
      return { result: toExecutionResultMessage(invoked.result), version: invoked.version };
    }),

    getSkill: unary(logger, "GetSkill", async (request) => {
      const found = await service.get(request.name);
      return { skill: toSkillMessage(found.skill), code: found.code };
    }),

    listSkills: unary(logger, "ListSkills", async (request) => ({
      skills: service.list(request.includeInactive).map(toSkillMessage),
    })),

    listSkillVersions: unary(logger, "ListSkillVersions", async (request) => {
      const { skill, versions } = service.versions(request.name);
      return { versions: versions.map((v) => toVersionMessage(v, skill.version)) };
    }),

    getSkillStats: unary(logger, "GetSkillStats", async (request) => toStatsMessage(service.stats(request.name))),

    rollbackSkill: unary(logger, "RollbackSkill", async (request, context) => ({
      skill: toSkillMessage(await service.rollback(request.name, request.version, context)),
    })),

    deleteSkill: unary(logger, "DeleteSkill", async (request, context) => ({
      skill: toSkillMessage(await service.delete(request.name, context)),
    })),

    restoreSkill: unary(logger, "RestoreSkill", async (request, context) => ({
      skill: toSkillMessage(await service.restore(request.name, context)),
    })),

    setSkillProtected: unary(logger, "SetSkillProtected", async (request) => ({
      skill: toSkillMessage(await service.setProtected(request.name, request.protected)),
    })),

    retireDegradedSkills: unary(logger, "RetireDegradedSkills", async (request, context) => ({
      retired: (await service.retireDegraded(request.dryRun, context)).map((r) => ({ name: r.name, reasons: r.reasons })),
      dryRun: request.dryRun,
    })),

    routeSkills: unary(logger, "RouteSkills", async (request) => {
      const format = request.format === ToolFormat.TOOL_FORMAT_ANTHROPIC ? "anthropic" : "openai";
      const mode =
        request.mode === RouteMode.ROUTE_MODE_KEYWORDS ? "keywords" : request.mode === RouteMode.ROUTE_MODE_VECTORS ? "vectors" : "fused";
      const routed = await routing.route({ query: request.query, limit: request.limit, mode, format });
      return { routeId: routed.routeId, skills: routed.skills.map(toRoutedSkillMessage), degraded: routed.degraded };
    }),

    recordRouteFeedback: unary(logger, "RecordRouteFeedback", async (request) => ({
      credited: await service.recordRouteFeedback(request.routeId, request.name, request.success),
    })),

    wipeSandbox: unary(logger, "WipeSandbox", async (_request, context) => ({
      removedRunDirectories: await service.wipeSandbox(context),
    })),
  };

  /**
   * Wraps a handler so every outcome reaches the client exactly once, with a call context whose
   * signal fires on cancellation or deadline: a SkillEngineError becomes its status and message;
   * anything else is logged and answered INTERNAL without leaking details.
   */
  function unary<Req, Res>(
    log: Logger,
    method: string,
    handler: (request: Req, context: CallContext) => Promise<Res>,
  ): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
    return (call, callback) => {
      const { signal, dispose } = signalOf(call);
      const started = performance.now();
      const requestId = requestIdOf(call.metadata);
      const reply = new Metadata();
      reply.set(REQUEST_ID_HEADER, requestId);
      call.sendMetadata(reply);
      const skill = (call.request as { name?: unknown }).name;
      const done = (code: status): void => {
        const seconds = (performance.now() - started) / 1000;
        metrics?.recordRpc(method, status[code] ?? String(code), seconds);
        // Names and sizes only: skill code and payloads never reach the log above debug.
        log.info({ requestId, method, code: status[code], ms: Math.round(seconds * 1000), caller, skill }, "rpc");
      };
      handler(call.request, { caller, requestId, signal })
        .then(
          (response) => {
            done(status.OK);
            callback(null, response);
          },
          (error: unknown) => {
            const serviceError = toServiceError(log, method, error);
            done(serviceError.code ?? status.UNKNOWN);
            callback(serviceError);
          },
        )
        .finally(dispose);
    };
  }
}

const REQUEST_ID_HEADER = "x-request-id";

/** The caller's x-request-id when it sent a sane one, else a new id. */
function requestIdOf(metadata: Metadata): string {
  const sent = metadata.get(REQUEST_ID_HEADER)[0];
  return typeof sent === "string" && /^[\w.:-]{1,128}$/.test(sent) ? sent : randomUUID();
}

function toServiceError(logger: Logger, method: string, error: unknown): ServerErrorResponse {
  if (error instanceof SkillEngineError) {
    if (error.code === status.INTERNAL || error.code === status.UNAVAILABLE) {
      logger.error({ err: error, method }, "request failed");
    }
    return Object.assign(new Error(error.message), { code: error.code, details: error.message, metadata: new Metadata() });
  }
  logger.error({ err: error, method }, "unexpected error");
  const message = "internal error; the service log has the details";
  return Object.assign(new Error(message), { code: status.INTERNAL, details: message, metadata: new Metadata() });
}
