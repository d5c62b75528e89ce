import type { SkillEngineServer } from "../gen/skillengine/v1/skill_engine.js";
import { type Candidate, CandidateStatus as CandidateStatusMessage, type EvolutionEvent } from "../gen/skillengine/v1/learning.js";
import { InvalidArgumentError } from "../errors/index.js";
import type { CandidateRecord, CandidateStatus, EvolutionRecord, LearningService } from "../learning/index.js";
import { toSkillMessage } from "./messages.js";
import { type UnaryDependencies, unaryHandler } from "./unary-call.js";

type LearningHandlers = Pick<
  SkillEngineServer,
  "recordSession" | "listCandidates" | "dismissCandidate" | "promoteCandidate" | "listSkillEvolution" | "recordSkillOutcome"
>;

/** Learning's RPCs on the SkillEngine service (docs/learning.md): messages in, use cases, messages out. */
export function learningHandlers(learning: LearningService, deps: UnaryDependencies): LearningHandlers {
  return {
    recordSession: unaryHandler(deps, "RecordSession", async (request, context) => {
      const recorded = await learning.recordSession(
        request.sessionKey,
        request.toolCalls.map((c) => ({ tool: c.tool, arguments: c.arguments })),
        context,
      );
      return {
        candidates: recorded.candidates.map(toCandidateMessage),
        promotedSkills: recorded.promotedSkills,
        toolCalls: recorded.toolCalls,
        alreadyRecorded: recorded.alreadyRecorded,
        implicitFailures: recorded.implicitFailures,
      };
    }),

    listCandidates: unaryHandler(deps, "ListCandidates", async (request, context) => {
      const page = learning.listPage(
        { status: fromStatusMessage(request.status), pageSize: request.pageSize, pageToken: request.pageToken },
        context,
      );
      return { candidates: page.items.map(toCandidateMessage), nextPageToken: page.nextPageToken };
    }),

    dismissCandidate: unaryHandler(deps, "DismissCandidate", async (request, context) => ({
      candidate: toCandidateMessage(learning.dismiss(request.id, context)),
    })),

    promoteCandidate: unaryHandler(deps, "PromoteCandidate", async (request, context) => {
      const promotion = await learning.promote(request.id, { name: request.name, description: request.description }, context);
      return {
        candidate: toCandidateMessage(promotion.candidate),
        skill: toSkillMessage(promotion.skill),
        evolution: promotion.evolution ? toEvolutionMessage(promotion.evolution) : undefined,
      };
    }),

    listSkillEvolution: unaryHandler(deps, "ListSkillEvolution", async (request, context) => {
      const page = learning.evolution({ name: request.name, pageSize: request.pageSize, pageToken: request.pageToken }, context);
      return { events: page.items.map(toEvolutionMessage), nextPageToken: page.nextPageToken };
    }),

    recordSkillOutcome: unaryHandler(deps, "RecordSkillOutcome", async (request, context) => {
      const recorded = await learning.recordOutcome(request.name, request.invocationId, request.success, request.note, context);
      return { exitCodeSuccess: recorded.exitCodeSuccess, overridden: recorded.overridden, skill: toSkillMessage(recorded.skill) };
    }),
  };
}

const STATUS_TO_WIRE: Readonly<Record<CandidateStatus, CandidateStatusMessage>> = {
  candidate: CandidateStatusMessage.CANDIDATE_STATUS_CANDIDATE,
  promoted: CandidateStatusMessage.CANDIDATE_STATUS_PROMOTED,
  dismissed: CandidateStatusMessage.CANDIDATE_STATUS_DISMISSED,
};

function fromStatusMessage(status: CandidateStatusMessage): CandidateStatus | undefined {
  if (status === CandidateStatusMessage.CANDIDATE_STATUS_UNSPECIFIED) return undefined;
  const found = (Object.entries(STATUS_TO_WIRE) as [CandidateStatus, CandidateStatusMessage][]).find(([, wire]) => wire === status);
  if (!found) throw new InvalidArgumentError("status", "must be CANDIDATE, PROMOTED, DISMISSED or unspecified (all)");
  return found[0];
}

export function toCandidateMessage(candidate: CandidateRecord): Candidate {
  return {
    id: candidate.id,
    agentId: candidate.agentId,
    hash: candidate.hash,
    name: candidate.name,
    description: candidate.description,
    toolSequence: candidate.toolSequence.map((s) => ({ tool: s.tool, shape: s.shape })),
    sessionKeys: candidate.sessionKeys,
    occurrences: candidate.occurrences,
    status: STATUS_TO_WIRE[candidate.status],
    createdAt: candidate.createdAt,
    promotedAt: candidate.promotedAt ?? "",
    skillName: candidate.skillName,
  };
}

function toEvolutionMessage(event: EvolutionRecord): EvolutionEvent {
  return {
    skillName: event.skillName,
    fromVersion: event.fromVersion,
    toVersion: event.toVersion,
    candidateId: event.candidateId,
    overlap: event.overlap,
    at: event.at,
    summary: event.summary,
  };
}
