import { PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { compareKeys, type Listing, openPage, type Page, type PageRequest } from "../paging/index.js";
import type { SecretInfo, SecretStore } from "./secret-store.js";

/** ListSecrets' pages: by name. */
const LIST_SECRETS: Listing = { name: "ListSecrets", keyShapes: ["s"] };

/** Who calls (the gRPC layer's call context has it): a secret always belongs to the calling agent. */
export interface SecretsContext {
  readonly caller: Caller;
}

/** One skill the caller can see and the secret names its active version declares. */
export interface SkillSecretDeclaration {
  readonly skill: string;
  readonly secrets: readonly string[];
}

/** Where ListSecrets learns which skills use a secret: the skills the caller can see, with their declarations. */
export interface SecretUses {
  declaredFor(context: SecretsContext): Iterable<SkillSecretDeclaration>;
}

/** A secret as ListSecrets answers it: name, dates and the visible skills that declare it; never its value. */
export interface ListedSecret extends SecretInfo {
  readonly usedBy: readonly string[];
}

/**
 * The secrets' use cases (docs/security.md#secrets): SetSecret, DeleteSecret, ListSecrets for the calling agent's own
 * secrets, and the admins' RotateSecretsKey. No answer carries a value.
 */
export class SecretsService {
  constructor(
    private readonly store: SecretStore,
    /** Without it, `usedBy` is empty (no skill declares secrets). */
    private readonly uses?: SecretUses,
  ) {}

  async set(input: { readonly name: string; readonly value: string }, context: SecretsContext): Promise<ListedSecret> {
    const info = await this.store.set(context.caller.agentId, input.name, input.value);
    return { ...info, usedBy: usedBy([info.name], this.declarations(context)).get(info.name) ?? [] };
  }

  async delete(input: { readonly name: string }, context: SecretsContext): Promise<void> {
    return this.store.delete(context.caller.agentId, input.name);
  }

  list(context: SecretsContext): ListedSecret[] {
    const secrets = this.store.list(context.caller.agentId);
    const users = usedBy(
      secrets.map((secret) => secret.name),
      this.declarations(context),
    );
    return secrets.map((secret) => ({ ...secret, usedBy: users.get(secret.name) ?? [] }));
  }

  /**
   * ListSecrets: one page of {@link list} by name (docs/api.md#pagination). An agent holds at most
   * 100 secrets, so the page is cut from the whole list.
   */
  listPage(request: PageRequest, context: SecretsContext): Page<ListedSecret> {
    const window = openPage<[string]>(LIST_SECRETS, {}, request);
    const sorted = this.list(context).sort((a, b) => compareKeys([a.name], [b.name]));
    return window.slice(sorted, (secret) => [secret.name]);
  }

  /** Re-encrypts every agent's secrets under a new key (docs/security.md#rotating-the-key). Admin only. */
  async rotateKey(context: SecretsContext): Promise<{ rotated: number }> {
    const { caller } = context;
    if (!caller.admin) {
      throw new PermissionDeniedError(
        caller.agentId,
        `RotateSecretsKey is for admins; agent "${caller.agentId}" does not have the admin role (see SKILL_ENGINE_TOKENS_FILE)`,
      );
    }
    return this.store.rotateKey();
  }

  private declarations(context: SecretsContext): Iterable<SkillSecretDeclaration> {
    return this.uses?.declaredFor(context) ?? [];
  }
}

/** For each of `names`, the skills among `declarations` that declare it, sorted and without repeats. */
export function usedBy(names: readonly string[], declarations: Iterable<SkillSecretDeclaration>): Map<string, string[]> {
  const wanted = new Set(names);
  const users = new Map<string, Set<string>>();
  for (const { skill, secrets } of declarations) {
    for (const name of secrets) {
      if (!wanted.has(name)) continue;
      const skills = users.get(name) ?? new Set<string>();
      skills.add(skill);
      users.set(name, skills);
    }
  }
  return new Map([...users].map(([name, skills]) => [name, [...skills].sort()]));
}
