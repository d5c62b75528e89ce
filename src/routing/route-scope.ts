import { agentAudience, PUBLIC_AUDIENCE, userAudience, type VectorSearchFilter } from "../search/index.js";

/**
 * Whose skills a route may return: an agent's own and the public ones, or (admins) all of them.
 * The agent id is also recorded with the route, so only that agent's outcomes credit it.
 */
export interface RouteScope {
  readonly agentId: string;
  readonly everything: boolean;
  /** The end user a delegating agent acts for: skills granted to that user are in scope too. */
  readonly userId?: string;
}

/** Statuses that are routed; deprecated, retired and deleted skills are not. */
export const ROUTABLE_STATUSES = ["active", "degraded"];

/**
 * One search per source (docs/routing.md#scoping): the index filters are AND-ed allowlists, and
 * "own OR public OR system OR granted to me OR granted to my user" is the single allowlist of at
 * most three audiences (an entry's audiences are `public`, or its owner's and each grantee's).
 * Admins see every routable skill.
 */
export function scopeFilter(scope: RouteScope): VectorSearchFilter {
  const statuses = ROUTABLE_STATUSES;
  if (scope.everything) return { statuses };
  const audiences = [PUBLIC_AUDIENCE, agentAudience(scope.agentId)];
  if (scope.userId !== undefined) audiences.push(userAudience(scope.userId));
  return { statuses, audiences };
}
