import type { SecretInfo } from "../gen/skillengine/v1/secrets.js";
import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import type { ListedSecret, SecretsService } from "../secrets/index.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

/**
 * The secrets' RPCs on the SkillEngine service (docs/security.md#secrets): messages to use cases, nothing else. The
 * rpc log line names the secret, never its value (SetSecret's request is not handed to the shared wrapper's fields).
 */
export function secretHandlers(
  secrets: SecretsService,
  deps: UnaryDependencies,
): Pick<SkillEngineServer, "setSecret" | "deleteSecret" | "listSecrets" | "rotateSecretsKey"> {
  return {
    setSecret: unaryHandler(
      deps,
      "SetSecret",
      async (request, context) => ({ secret: toSecretMessage(await secrets.set({ name: request.name, value: request.value }, context)) }),
      (request) => ({ secret: request.name }),
    ),

    deleteSecret: unaryHandler(
      deps,
      "DeleteSecret",
      async (request, context) => {
        await secrets.delete({ name: request.name }, context);
        return {};
      },
      (request) => ({ secret: request.name }),
    ),

    listSecrets: unaryHandler(deps, "ListSecrets", async (request, context) => {
      const page = secrets.listPage(request, context);
      return { secrets: page.items.map(toSecretMessage), nextPageToken: page.nextPageToken };
    }),

    rotateSecretsKey: unaryHandler(
      deps,
      "RotateSecretsKey",
      async (_request, context) => secrets.rotateKey(context),
      (_request, response) => (response === undefined ? {} : { rotated: response.rotated }),
    ),
  };
}

function toSecretMessage(secret: ListedSecret): SecretInfo {
  return { name: secret.name, createdAt: secret.createdAt, updatedAt: secret.updatedAt, usedBy: [...secret.usedBy] };
}
