import { InvalidArgumentError } from "../errors/index.js";
import {
  type Lesson,
  LessonScope as LessonScopeMessage,
  LessonState as LessonStateMessage,
  type PlaybookServer,
} from "../gen/skillengine/v1/playbook.js";
import { Visibility } from "../gen/skillengine/v1/skills.js";
import type { LessonScope, LessonView, PlaybookService } from "../playbook/index.js";
import { fromVisibilityMessage } from "./messages.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

export const PLAYBOOK_SERVICE_NAME = "skillengine.v1.Playbook";

/** The Playbook service: maps messages to the playbook's use cases, nothing else. */
export function playbookHandlers(playbook: PlaybookService, deps: UnaryDependencies): PlaybookServer {
  return {
    addLesson: unaryHandler(deps, "AddLesson", async (request, { caller }) => {
      const added = await playbook.add(
        {
          trigger: request.trigger,
          antiPattern: request.antiPattern,
          correctPattern: request.correctPattern,
          domains: request.domains,
          confidence: request.confidence,
          source: request.source,
          sourceChallengeHash: request.sourceChallengeHash,
          challengeText: request.challengeText,
          visibility: lessonVisibility(request.visibility),
        },
        caller,
      );
      return { lesson: toLessonMessage(added.lesson), merged: added.merged, archived: added.archived };
    }),

    verifyLesson: unaryHandler(deps, "VerifyLesson", async (request, { caller }) => {
      const verified = await playbook.verify(
        request.lessonId,
        {
          originalPassed: request.originalPassed,
          originalAttempts: request.originalAttempts,
          verifyPassed: request.verifyPassed,
          verifyAttempts: request.verifyAttempts,
        },
        caller,
      );
      return { lesson: toLessonMessage(verified.lesson), reason: verified.reason };
    }),

    getPlaybookContext: unaryHandler(deps, "GetPlaybookContext", async (request, { caller }) => {
      const found = await playbook.context(request.query, request.limit, caller);
      return {
        context: found.context,
        lessons: found.lessons.map(toLessonMessage),
        retrievalId: found.retrievalId,
        warnings: found.warnings,
      };
    }),

    creditRecentRetrievals: unaryHandler(deps, "CreditRecentRetrievals", async (request, { caller }) => ({
      credited: playbook.creditRecent(request.windowSeconds, caller),
    })),

    recordHelpfulRetrieval: unaryHandler(deps, "RecordHelpfulRetrieval", async (request, { caller }) => ({
      lesson: toLessonMessage(playbook.recordHelpful(request.lessonId, caller)),
    })),

    pruneLessons: unaryHandler(deps, "PruneLessons", async (request, { caller }) => ({
      dropped: (
        await playbook.prune(
          {
            minRetrievals: request.minRetrievals,
            maxDropFraction: request.hasMaxDropFraction || request.maxDropFraction !== 0 ? request.maxDropFraction : undefined,
            dryRun: request.dryRun,
          },
          caller,
        )
      ).map(toLessonMessage),
      dryRun: request.dryRun,
    })),

    listLessons: unaryHandler(deps, "ListLessons", async (request, { caller }) => {
      const page = playbook.listPage(
        {
          scope: lessonScope(request.scope),
          domain: request.domain,
          limit: request.limit,
          includeInactive: request.includeInactive,
          owner: request.owner,
          pageSize: request.pageSize,
          pageToken: request.pageToken,
        },
        caller,
      );
      return { lessons: page.items.map(toLessonMessage), nextPageToken: page.nextPageToken };
    }),

    getLesson: unaryHandler(deps, "GetLesson", async (request, { caller }) => ({
      lesson: toLessonMessage(playbook.get(request.lessonId, caller)),
    })),

    setLessonPinned: unaryHandler(deps, "SetLessonPinned", async (request, { caller }) => ({
      lesson: toLessonMessage(await playbook.setPinned(request.lessonId, request.pinned, caller)),
    })),

    deleteLesson: unaryHandler(deps, "DeleteLesson", async (request, { caller }) => ({
      lesson: toLessonMessage(await playbook.delete(request.lessonId, caller)),
    })),

    restoreLesson: unaryHandler(deps, "RestoreLesson", async (request, { caller }) => {
      const restored = await playbook.restore(request.lessonId, caller);
      return { lesson: toLessonMessage(restored.lesson), archived: restored.archived };
    }),
  };
}

const STATE_MESSAGE = {
  active: LessonStateMessage.LESSON_STATE_ACTIVE,
  archived: LessonStateMessage.LESSON_STATE_ARCHIVED,
  deleted: LessonStateMessage.LESSON_STATE_DELETED,
} as const;

export function toLessonMessage(lesson: LessonView): Lesson {
  return {
    id: lesson.id,
    owner: lesson.owner,
    trigger: lesson.trigger,
    antiPattern: lesson.antiPattern,
    correctPattern: lesson.correctPattern,
    domains: [...lesson.domains],
    confidence: lesson.confidence,
    source: lesson.source,
    sourceChallengeHash: lesson.sourceChallengeHash,
    challengeTextHash: lesson.challengeTextHash,
    state: STATE_MESSAGE[lesson.state],
    visibility: lesson.visibility === "public" ? Visibility.VISIBILITY_PUBLIC : Visibility.VISIBILITY_PRIVATE,
    verified: lesson.verified,
    pinned: lesson.pinned,
    retrievals: lesson.retrievals,
    helpfulRetrievals: lesson.helpfulRetrievals,
    timesAdded: lesson.timesAdded,
    frequency: lesson.frequency,
    hitRate: lesson.hitRate,
    utility: lesson.utility,
    createdAt: new Date(lesson.createdAt),
    updatedAt: new Date(lesson.updatedAt),
    lastRetrievedAt: lesson.lastRetrievedAt === undefined ? undefined : new Date(lesson.lastRetrievedAt),
    lastHelpfulAt: lesson.lastHelpfulAt === undefined ? undefined : new Date(lesson.lastHelpfulAt),
    archivedReason: lesson.archivedReason,
    guarded: lesson.guarded,
  };
}

/** Unspecified is private; anything else unknown is refused. */
function lessonVisibility(visibility: Visibility): "private" | "public" {
  if (visibility === Visibility.VISIBILITY_UNSPECIFIED) return "private";
  const domain = fromVisibilityMessage(visibility);
  if (domain === undefined) throw new InvalidArgumentError("visibility", "must be VISIBILITY_PRIVATE or VISIBILITY_PUBLIC");
  return domain;
}

function lessonScope(scope: LessonScopeMessage): LessonScope {
  switch (scope) {
    case LessonScopeMessage.LESSON_SCOPE_TODAY:
      return "today";
    case LessonScopeMessage.LESSON_SCOPE_WEEK:
      return "week";
    case LessonScopeMessage.LESSON_SCOPE_ALL:
    case LessonScopeMessage.LESSON_SCOPE_UNSPECIFIED:
      return "all";
    case LessonScopeMessage.UNRECOGNIZED:
    default:
      throw new InvalidArgumentError("scope", "must be LESSON_SCOPE_TODAY, LESSON_SCOPE_WEEK or LESSON_SCOPE_ALL");
  }
}
