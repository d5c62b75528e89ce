import { type sendUnaryData, type ServerErrorResponse, type ServerUnaryCall, Metadata, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { SkillService } from "../control/index.js";
import { SkillEngineError } from "../errors.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { LOCAL_AGENT, signalOf } from "./call-context.js";
import { toExecutionResultMessage, toSkillMessage } from "./messages.js";

/** The SkillEngine service: maps messages to use cases and errors to statuses, nothing else. */
export function skillEngineHandlers(service: SkillService, logger: Logger): SkillEngineServer {
  return {
    registerSkill: unary(logger, "RegisterSkill", async (request, call) => {
      const { signal, dispose } = signalOf(call);
      try {
        const registered = await service.register(
          {
            name: request.name,
            description: request.description,
            parametersSchema: request.parametersSchema,
            code: request.code,
            testPayload: request.testPayload,
          },
          { caller: LOCAL_AGENT, signal },
        );
        return {
          skill: toSkillMessage(registered.skill),
          test: toExecutionResultMessage(registered.test),
          normalizations: registered.normalizations,
          warnings: registered.warnings.map((w) => ({ ...w })),
        };
      } finally {
        dispose();
      }
    }),

    invokeSkill: unary(logger, "InvokeSkill", async (request, call) => {
      const { signal, dispose } = signalOf(call);
      try {
        const invoked = await service.invoke(request.name, request.payload, { caller: LOCAL_AGENT, signal });
        return { result: toExecutionResultMessage(invoked.result), version: invoked.version };
      } finally {
        dispose();
      }
    }),

    getSkill: unary(logger, "GetSkill", async (request) => {
      const found = await service.get(request.name);
      return { skill: toSkillMessage(found.skill), code: found.code };
    }),

    listSkills: unary(logger, "ListSkills", async () => ({ skills: service.list().map(toSkillMessage) })),
  };
}

/**
 * Wraps a handler so every outcome reaches the client exactly once: a SkillEngineError becomes
 * its status and message; anything else is logged and answered INTERNAL without leaking details.
 */
function unary<Req, Res>(
  logger: Logger,
  method: string,
  handler: (request: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
): (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => void {
  return (call, callback) => {
    handler(call.request, call).then(
      (response) => callback(null, response),
      (error: unknown) => callback(toServiceError(logger, method, error)),
    );
  };
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
