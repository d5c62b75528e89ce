import type { SkillSharing } from "../control/index.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { toGrantMessage, toSkillMessageFor } from "./messages.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

/** Grants, revocations and the on/off switch (docs/security.md#grants-and-visibility): messages to use cases, nothing else. */
export function sharingHandlers(
  sharing: SkillSharing,
  deps: UnaryDependencies,
): Pick<SkillEngineServer, "grantSkill" | "revokeSkill" | "listGrants" | "setSkillEnabled"> {
  const skillOf = <Req extends { name: string }>(request: Req): Record<string, unknown> => ({ skill: request.name });
  return {
    grantSkill: unaryHandler(
      deps,
      "GrantSkill",
      async (request, { caller }) => {
        const granted = await sharing.grant(
          request.name,
          { agent: request.granteeAgent, user: request.granteeUser },
          request.version,
          caller,
        );
        return { skill: toSkillMessageFor(caller)(granted.skill), grant: toGrantMessage(granted.grant) };
      },
      skillOf,
    ),

    revokeSkill: unaryHandler(
      deps,
      "RevokeSkill",
      async (request, { caller }) => {
        const outcome = await sharing.revoke(request.name, { agent: request.granteeAgent, user: request.granteeUser }, caller);
        return { skill: toSkillMessageFor(caller)(outcome.skill), revoked: outcome.revoked };
      },
      skillOf,
    ),

    listGrants: unaryHandler(
      deps,
      "ListGrants",
      async (request, { caller }) => {
        const page = sharing.grantsPage(request.name, request, caller);
        return { grants: page.items.map(toGrantMessage), nextPageToken: page.nextPageToken };
      },
      skillOf,
    ),

    setSkillEnabled: unaryHandler(
      deps,
      "SetSkillEnabled",
      async (request, { caller }) => ({
        skill: toSkillMessageFor(caller)(await sharing.setEnabled(request.name, request.enabled, caller)),
      }),
      skillOf,
    ),
  };
}
