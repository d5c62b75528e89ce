import { InvalidArgumentError, PermissionDeniedError } from "../errors/index.js";
import type { Caller } from "../identity/index.js";
import { openPage, type Page, type PageRequest } from "../paging/index.js";
import type { LessonState } from "./lesson.js";
import { type PlaybookCore, viewOf } from "./playbook-core.js";
import { type LessonScope, type LessonView, PLAYBOOK_LIMITS } from "./playbook-types.js";

const DAY_MS = 86_400_000;

export interface ListLessonsRequest extends PageRequest {
  readonly scope: LessonScope;
  readonly domain: string;
  /** The older name of the page size: used when pageSize is unset or 0. */
  readonly limit: number;
  readonly includeInactive: boolean;
  readonly owner: string;
}

/** A lesson's place in ListLessons' order: utility, then creation time, both highest first, then id. */
type LessonKey = [utility: number, createdAt: number, id: string];

/** Whether `key` comes after `cursor` in ListLessons' order. */
function lessonAfter(key: LessonKey, cursor: LessonKey): boolean {
  if (key[0] !== cursor[0]) return key[0] < cursor[0];
  if (key[1] !== cursor[1]) return key[1] < cursor[1];
  return key[2] > cursor[2];
}

/**
 * ListLessons' tokens: version 2 carries the walk's instant (version 1 did not, and ordered each
 * page at its own instant, so a utility decaying between pages crossed the cursor).
 */
const LESSON_TOKEN_VERSION = 2;

/**
 * ListLessons: the caller's lessons (an admin's: everyone's, or one owner's), highest utility first,
 * a page at a time (docs/api.md#pagination). Utility is computed when read (retrievals, credit and
 * staleness), so the page is cut in memory from the owner's lessons, after the cursor's place in
 * that order. Staleness decays with the clock: every page of a walk computes utility and the scope
 * at the walk's first instant, which the token carries, so time alone moves no lesson across the
 * cursor; a lesson retrieved, credited, verified or merged between two pages still may
 * (docs/api.md#pagination).
 */
export function listLessons(core: PlaybookCore, request: ListLessonsRequest, caller: Caller): Page<LessonView> {
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
  const domain = request.domain.trim().toLowerCase();
  const window = openPage<LessonKey>(
    { name: "ListLessons", keyShapes: ["nns"], defaultSize: limit, version: LESSON_TOKEN_VERSION, clock: core.clock },
    { scope: request.scope, domain, includeInactive: request.includeInactive, owner: owner ?? "" },
    request,
  );
  const now = window.asOf ?? core.clock();
  const since = scopeStart(request.scope, now);
  const key = (lesson: LessonView): LessonKey => [lesson.utility, lesson.createdAt, lesson.id];
  const sorted = core.store
    .list(owner, states)
    .filter((l) => l.createdAt >= since && (domain === "" || l.domains.includes(domain)))
    .map((l) => viewOf(core, l, now))
    .sort((a, b) => b.utility - a.utility || b.createdAt - a.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return window.slice(sorted, key, lessonAfter);
}

/** The first instant a scope covers: 00:00 UTC today, 7 days back, or the beginning. */
function scopeStart(scope: LessonScope, now: number): number {
  if (scope === "today") return Math.floor(now / DAY_MS) * DAY_MS;
  if (scope === "week") return now - 7 * DAY_MS;
  return Number.NEGATIVE_INFINITY;
}
