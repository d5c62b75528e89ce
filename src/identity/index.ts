/** Identity: bearer tokens → agents, and who a call comes from. */
export { Authenticator, type TokenSources } from "./authenticator.js";
export {
  AGENT_ID_PATTERN,
  agentIdProblem,
  type Caller,
  LOCAL_AGENT,
  LOCAL_CALLER,
  serviceCaller,
  USER_ID_PATTERN,
  userIdProblem,
} from "./caller.js";
export { MIN_TOKEN_LENGTH, parseInlineTokens, parseTokensFile, sha256Hex, type TokenGrant, TokenListError } from "./token-list.js";
