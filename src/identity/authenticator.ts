import { readFile, stat } from "node:fs/promises";
import type { Logger } from "pino";
import { InvalidArgumentError, PermissionDeniedError, UnauthenticatedError } from "../errors/index.js";
import { type Caller, LOCAL_AGENT, LOCAL_CALLER, userIdProblem } from "./caller.js";
import { parseInlineTokens, parseTokensFile, sha256Hex, type TokenGrant, TokenListError } from "./token-list.js";

export interface TokenSources {
  /** A JSON tokens file (re-read by `reload`). */
  readonly tokensFile: string | undefined;
  /** `agent[:admin]=token,...` from the environment. */
  readonly inlineTokens: string | undefined;
}

const BEARER = /^bearer[ \t]+(\S+)[ \t]*$/i;

/**
 * Maps `authorization: Bearer <token>` to an agent. With no tokens configured there is one
 * caller, the local agent, with the admin role. Only SHA-256 digests of tokens are held.
 */
export class Authenticator {
  private grants: ReadonlyMap<string, TokenGrant>;

  private constructor(
    private readonly sources: TokenSources,
    grants: readonly TokenGrant[],
    private readonly logger: Logger,
  ) {
    this.grants = indexByDigest(grants);
  }

  /** Reads the configured token sources; throws TokenListError naming every problem. */
  static async load(sources: TokenSources, logger: Logger): Promise<Authenticator> {
    const authenticator = new Authenticator(sources, await readGrants(sources, logger), logger);
    authenticator.announce();
    return authenticator;
  }

  /** True when calls must carry a token. */
  get enabled(): boolean {
    return this.sources.tokensFile !== undefined || this.sources.inlineTokens !== undefined;
  }

  /** The caller a call's `authorization` metadata names; UNAUTHENTICATED when it names nobody. */
  authenticate(authorization: string | undefined): Caller {
    if (!this.enabled) return LOCAL_CALLER;
    if (authorization === undefined || authorization.trim() === "") {
      throw new UnauthenticatedError('this service requires a token: send the metadata "authorization: Bearer <token>"');
    }
    const match = BEARER.exec(authorization);
    if (!match?.[1]) throw new UnauthenticatedError('the authorization metadata must be "Bearer <token>"');
    const grant = this.grants.get(sha256Hex(match[1]));
    if (!grant) throw new UnauthenticatedError("the bearer token is not valid (unknown or revoked)");
    return { agentId: grant.agentId, admin: grant.admin, authenticated: true };
  }

  /**
   * The caller acting for the end user `userId` names (`x-user-id` metadata): allowed only to
   * agents whose token entry has `delegate` (docs/security.md#users-and-delegation), and to the
   * local agent when no tokens are configured. Undefined or empty: the caller itself.
   */
  actingFor(caller: Caller, userId: string | undefined): Caller {
    if (userId === undefined || userId === "") return caller;
    const problem = userIdProblem(userId);
    if (problem) throw new InvalidArgumentError("x-user-id", problem);
    const delegates = !this.enabled || [...this.grants.values()].some((g) => g.agentId === caller.agentId && g.delegate);
    if (!delegates) {
      throw new PermissionDeniedError(
        caller.agentId,
        `agent "${caller.agentId}" may not act for end users: only agents with "delegate": true in the tokens file may send x-user-id`,
      );
    }
    return { ...caller, userId };
  }

  /**
   * Re-reads the token sources (SIGHUP), so tokens can be added and revoked without a restart.
   * A broken file keeps the previous list in force and says why.
   */
  async reload(): Promise<{ agents: number }> {
    try {
      this.grants = indexByDigest(await readGrants(this.sources, this.logger));
    } catch (error) {
      this.logger.error({ err: error }, "tokens not reloaded; the previous list stays in force");
      throw error;
    }
    this.announce();
    return { agents: new Set([...this.grants.values()].map((g) => g.agentId)).size };
  }

  private announce(): void {
    if (!this.enabled) {
      this.logger.warn(
        { agent: LOCAL_AGENT },
        `no tokens configured (SKILL_ENGINE_TOKENS_FILE, SKILL_ENGINE_TOKENS): every call runs as the one local agent "${LOCAL_AGENT}", with the admin role`,
      );
      return;
    }
    const grants = [...this.grants.values()];
    this.logger.info(
      {
        tokens: grants.length,
        agents: [...new Set(grants.map((g) => g.agentId))].sort(),
        admins: [...new Set(grants.filter((g) => g.admin).map((g) => g.agentId))].sort(),
      },
      "bearer tokens required on every SkillEngine call",
    );
  }
}

async function readGrants(sources: TokenSources, logger: Logger): Promise<TokenGrant[]> {
  const grants: TokenGrant[] = [];
  if (sources.tokensFile !== undefined) {
    const file = sources.tokensFile;
    let text: string;
    try {
      text = await readFile(file, "utf8");
    } catch (error) {
      throw new TokenListError(`SKILL_ENGINE_TOKENS_FILE ${file}`, [
        `cannot be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}`,
      ]);
    }
    const parsed = parseTokensFile(text, `SKILL_ENGINE_TOKENS_FILE ${file}`);
    const mode = (await stat(file)).mode;
    if ((mode & 0o077) !== 0 && parsed.length > 0) {
      logger.warn(
        { file, mode: (mode & 0o777).toString(8) },
        "the tokens file is readable by other users; chmod 600 it (or store token_sha256 only)",
      );
    }
    grants.push(...parsed);
  }
  if (sources.inlineTokens !== undefined) grants.push(...parseInlineTokens(sources.inlineTokens, "SKILL_ENGINE_TOKENS"));
  const byDigest = new Map<string, string>();
  for (const grant of grants) {
    const previous = byDigest.get(grant.tokenSha256);
    if (previous !== undefined && previous !== grant.agentId) {
      throw new TokenListError("SKILL_ENGINE_TOKENS_FILE and SKILL_ENGINE_TOKENS", [
        `the same token is listed for "${previous}" and "${grant.agentId}"`,
      ]);
    }
    byDigest.set(grant.tokenSha256, grant.agentId);
  }
  return grants;
}

function indexByDigest(grants: readonly TokenGrant[]): ReadonlyMap<string, TokenGrant> {
  return new Map(grants.map((grant) => [grant.tokenSha256, grant]));
}
