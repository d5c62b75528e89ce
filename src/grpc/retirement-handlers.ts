import type { handleUnaryCall } from "@grpc/grpc-js";
import type { CallContext, Lifecycle } from "../control/index.js";
import type { RetireSkillRequest, RetireSkillResponse } from "../gen/skillengine/v1/retirement.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { toSkillMessage } from "./messages.js";

/** How the SkillEngine service wraps a handler (authentication, logging, error mapping). */
export type UnaryWrapper = <Req, Res>(
  method: string,
  handler: (request: Req, context: CallContext) => Promise<Res>,
) => handleUnaryCall<Req, Res>;

/** RetireSkill (docs/skill-lifecycle.md#retire-by-hand): the use case the console's Retire action calls too. */
export function retirementHandlers(lifecycle: Lifecycle, unary: UnaryWrapper): Pick<SkillEngineServer, "retireSkill"> {
  return {
    retireSkill: unary<RetireSkillRequest, RetireSkillResponse>("RetireSkill", async (request, context) => ({
      skill: toSkillMessage(await lifecycle.retire({ name: request.name, force: request.force }, context)),
    })),
  };
}
