import { createHash } from "node:crypto";
import { z } from "zod";
import { agentIdProblem } from "./caller.js";
import { errorMessage } from "../errors/index.js";

/** One accepted token: only its SHA-256 is kept in memory. */
export interface TokenGrant {
  readonly agentId: string;
  readonly admin: boolean;
  /** May act for end users by sending `x-user-id` (docs/security.md#users-and-delegation). */
  readonly delegate: boolean;
  /** Lowercase hex SHA-256 of the token. */
  readonly tokenSha256: string;
}

/** A token list that cannot be used; lists every problem, never a token. */
export class TokenListError extends Error {
  constructor(
    readonly source: string,
    readonly problems: readonly string[],
  ) {
    super(`${source}:\n  - ${problems.join("\n  - ")}`);
    this.name = "TokenListError";
  }
}

/** Short tokens can be guessed; 16 characters of a random string is the floor. */
export const MIN_TOKEN_LENGTH = 16;
const TOKEN_PATTERN = /^[\x21-\x7e]+$/;

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

const fileSchema = z
  .object({
    tokens: z.array(
      z
        .object({
          agent: z.string(),
          admin: z.boolean().optional(),
          delegate: z.boolean().optional(),
          token: z.string().optional(),
          token_sha256: z.string().optional(),
        })
        .strict(),
    ),
  })
  .strict();

/**
 * The JSON tokens file:
 * `{"tokens": [{"agent": "alice", "token_sha256": "<hex>"}, {"agent": "ops", "token": "...", "admin": true},
 * {"agent": "frontdesk", "token_sha256": "<hex>", "delegate": true}]}`; `delegate` lets an agent act for end users.
 * `token_sha256` (e.g. from `printf %s "$TOKEN" | sha256sum`) keeps the secret itself off the disk.
 */
export function parseTokensFile(text: string, source: string): TokenGrant[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new TokenListError(source, [`not valid JSON: ${errorMessage(error)}`]);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    throw new TokenListError(
      source,
      parsed.error.issues.map((issue) => `${issue.path.join(".") || "(top level)"}: ${issue.message}`),
    );
  }
  const problems: string[] = [];
  const grants: TokenGrant[] = [];
  parsed.data.tokens.forEach((entry, index) => {
    const where = `tokens[${index}]`;
    const agentProblem = agentIdProblem(entry.agent);
    if (agentProblem) problems.push(`${where}.agent: ${agentProblem}`);
    if ((entry.token === undefined) === (entry.token_sha256 === undefined)) {
      problems.push(`${where}: give exactly one of "token" and "token_sha256"`);
      return;
    }
    if (entry.token !== undefined) {
      const tokenProblem = plainTokenProblem(entry.token);
      if (tokenProblem) problems.push(`${where}.token: ${tokenProblem}`);
    } else if (!/^[0-9a-fA-F]{64}$/.test(entry.token_sha256 ?? "")) {
      problems.push(`${where}.token_sha256: must be 64 hex digits (the SHA-256 of the token)`);
    }
    grants.push({
      agentId: entry.agent,
      admin: entry.admin === true,
      delegate: entry.delegate === true,
      tokenSha256: entry.token !== undefined ? sha256Hex(entry.token) : (entry.token_sha256 ?? "").toLowerCase(),
    });
  });
  if (problems.length === 0 && grants.length === 0) problems.push('"tokens" is empty: nobody could call the service');
  problems.push(...duplicateProblems(grants));
  if (problems.length > 0) throw new TokenListError(source, problems);
  return grants;
}

/**
 * The inline form, for a quick set-up or a secret injected as one variable:
 * `SKILL_ENGINE_TOKENS="alice=<token>,ops:admin=<token>,desk:delegate=<token>"` (roles combine: `a:admin:delegate=…`).
 */
export function parseInlineTokens(text: string, source: string): TokenGrant[] {
  const problems: string[] = [];
  const grants: TokenGrant[] = [];
  text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .forEach((part, index) => {
      const where = `entry ${index + 1}`;
      const equals = part.indexOf("=");
      if (equals < 0) {
        problems.push(`${where}: expected "agent=token" or "agent:admin=token"`);
        return;
      }
      const [agentId = "", ...roles] = part.slice(0, equals).split(":");
      const token = part.slice(equals + 1);
      if (roles.some((role) => role !== "admin" && role !== "delegate")) {
        problems.push(`${where}: the roles are "admin" and "delegate" (agent:admin=token, agent:delegate=token)`);
        return;
      }
      const agentProblem = agentIdProblem(agentId);
      if (agentProblem) problems.push(`${where}: ${agentProblem}`);
      const tokenProblem = plainTokenProblem(token);
      if (tokenProblem) problems.push(`${where} (${agentId}): ${tokenProblem}`);
      grants.push({ agentId, admin: roles.includes("admin"), delegate: roles.includes("delegate"), tokenSha256: sha256Hex(token) });
    });
  if (problems.length === 0 && grants.length === 0) problems.push("no tokens given");
  problems.push(...duplicateProblems(grants));
  if (problems.length > 0) throw new TokenListError(source, problems);
  return grants;
}

function plainTokenProblem(token: string): string | undefined {
  if (!TOKEN_PATTERN.test(token)) return "must be printable ASCII without spaces";
  if (token.length < MIN_TOKEN_LENGTH)
    return `is ${token.length} characters; use at least ${MIN_TOKEN_LENGTH} random ones (e.g. openssl rand -hex 32)`;
  return undefined;
}

/** One token naming two agents would make identity depend on list order. */
function duplicateProblems(grants: readonly TokenGrant[]): string[] {
  const owners = new Map<string, string>();
  const problems: string[] = [];
  for (const grant of grants) {
    const previous = owners.get(grant.tokenSha256);
    if (previous !== undefined) problems.push(`the same token is listed for "${previous}" and "${grant.agentId}"`);
    else owners.set(grant.tokenSha256, grant.agentId);
  }
  return problems;
}
