import { InvalidArgumentError, PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import type { LessonState } from "./lesson.js";
import { type PlaybookCore, viewOf } from "./playbook-core.js";
import { type LessonScope, type LessonView, PLAYBOOK_LIMITS } from "./playbook-types.js";

const DAY_MS = 86_400_000;

export interface ListLessonsRequest {
  readonly scope: LessonScope;
  readonly domain: string;
  readonly limit: number;
  readonly includeInactive: boolean;
  readonly owner: string;
}

/** ListLessons: the caller's lessons (an admin's: everyone's, or one owner's), highest utility first. */
export function listLessons(core: PlaybookCore, request: ListLessonsRequest, caller: Caller): LessonView[] {
  const limit = request.limit === 0 ? PLAYBOOK_LIMITS.defaultListLimit : request.limit;
  if (!Number.isInteger(limit) || limit < 1 || limit > PLAYBOOK_LIMITS.maxListLimit) {
    throw new InvalidArgumentError(
      "limit",
      `must be in [1, ${PLAYBOOK_LIMITS.maxListLimit}] (0 means ${PLAYBOOK_LIMITS.defaultListLimit})`,
    );
  }
  if (request.owner !== "" && request.owner !== caller.agentId && !caller.admin) {
    throw new PermissionDeniedError(caller.agentId, "only an admin may list another agent's lessons");
  }
  const owner = request.owner !== "" ? request.owner : caller.admin ? undefined : caller.agentId;
  const states: LessonState[] = request.includeInactive ? ["active", "archived", "deleted"] : ["active"];
  const now = core.clock();
  const since = scopeStart(request.scope, now);
  const domain = request.domain.trim().toLowerCase();
  return core.store
    .list(owner, states)
    .filter((l) => l.createdAt >= since && (domain === "" || l.domains.includes(domain)))
    .map((l) => viewOf(core, l, now))
    .sort((a, b) => b.utility - a.utility || b.createdAt - a.createdAt || a.id.localeCompare(b.id))
    .slice(0, limit);
}

/** The first instant a scope covers: 00:00 UTC today, 7 days back, or the beginning. */
function scopeStart(scope: LessonScope, now: number): number {
  if (scope === "today") return Math.floor(now / DAY_MS) * DAY_MS;
  if (scope === "week") return now - 7 * DAY_MS;
  return Number.NEGATIVE_INFINITY;
}
