import { NotFoundError } from "../../errors/index.js";
import type { CandidateRecord, LearningService } from "../../learning/index.js";
import { markup, type SafeHtml } from "../html.js";
import { csrfField, page, time, type Viewer } from "../layout.js";
import { skillHref } from "./skill.js";

/** What an agent may do with one of its candidates (docs/console.md#candidates), each behind a confirmation step. */
export const CANDIDATE_ACTIONS = ["promote", "dismiss"] as const;
export type CandidateAction = (typeof CANDIDATE_ACTIONS)[number];

const confirmHref = (id: number, action: CandidateAction): string => `/console/candidates/confirm?id=${id}&action=${action}`;

function sequence(candidate: CandidateRecord): SafeHtml {
  return markup`${candidate.toolSequence.map((s, i) => markup`${i > 0 ? " → " : ""}<code>${s.tool}</code>`)}`;
}

function candidateRow(candidate: CandidateRecord): SafeHtml {
  const open = candidate.status === "candidate";
  return markup`<tr data-candidate="${candidate.id}">
    <td class="num">${candidate.id}</td>
    <td>${candidate.name}<br /><small>${candidate.description}</small></td>
    <td>${sequence(candidate)}</td>
    <td class="num">${candidate.occurrences}</td>
    <td class="sessions">${candidate.sessionKeys.map((k, i) => markup`${i > 0 ? ", " : ""}<code>${k}</code>`)}</td>
    <td>
      ${candidate.status}${candidate.skillName === "" ? "" : markup` → <a href="${skillHref(candidate.skillName)}">${candidate.skillName}</a>`}
    </td>
    <td>${time(new Date(candidate.createdAt))}</td>
    <td>
      ${
        open
          ? markup`<a class="action" data-action="promote" href="${confirmHref(candidate.id, "promote")}">Promote…</a>
              <a class="action" data-action="dismiss" href="${confirmHref(candidate.id, "dismiss")}">Dismiss…</a>`
          : ""
      }
    </td>
  </tr>`;
}

/**
 * The viewer's candidates (ListCandidates' use case): repeated tool sequences of its recorded
 * sessions, how often they occurred and in which sessions, with promote and dismiss.
 */
export function candidatesPage(learning: LearningService, viewer: Viewer, done?: { action: CandidateAction; id: number }): string {
  const candidates = learning.list(undefined, { caller: viewer.caller });
  const open = candidates.filter((c) => c.status === "candidate").length;
  const { candidateThreshold, minSequenceLength } = learning.policy;
  const finished = done === undefined ? undefined : candidates.find((c) => c.id === done.id);
  const notice =
    finished === undefined
      ? ""
      : finished.status === "promoted"
        ? markup`<p class="notice" id="notice">
            Candidate ${finished.id} is promoted: <a href="${skillHref(finished.skillName)}">${finished.skillName}</a>.
          </p>`
        : markup`<p class="notice" id="notice">Candidate ${finished.id} is ${finished.status}.</p>`;
  const body =
    candidates.length === 0
      ? markup`${notice}<p class="empty" id="candidates-empty">
            No candidate yet. Record sessions with RecordSession: a sequence of at least ${minSequenceLength} tool calls seen in
            ${candidateThreshold} distinct sessions becomes a candidate here.
          </p>`
      : markup`${notice}
          <p id="candidates-count">
            ${candidates.length} candidate${candidates.length === 1 ? "" : "s"} of ${viewer.caller.agentId}, ${open} open. A sequence
            becomes a candidate after ${candidateThreshold} distinct sessions; promoting registers it as a composed skill of those tools.
          </p>
          <table id="candidates">
            <thead>
              <tr>
                <th class="num">Id</th>
                <th>Name</th>
                <th>Tool sequence</th>
                <th class="num">Occurrences</th>
                <th>Sessions</th>
                <th>Status</th>
                <th>Found</th>
                <th></th>
              </tr>
            </thead>
            <tbody>
              ${candidates.map(candidateRow)}
            </tbody>
          </table>`;
  return page("Candidates", "candidates", viewer, body);
}

function ownCandidate(learning: LearningService, viewer: Viewer, id: number): CandidateRecord {
  const candidate = learning.list(undefined, { caller: viewer.caller }).find((c) => c.id === id);
  // Another agent's candidate is answered like one that does not exist, as ListCandidates does.
  if (!candidate) throw new NotFoundError(`candidate ${id} not found among ${viewer.caller.agentId}'s candidates`);
  return candidate;
}

/** The confirmation step; promotion may rename the skill and give it a description. */
export function candidateConfirmPage(learning: LearningService, viewer: Viewer, id: number, action: CandidateAction): string {
  const candidate = ownCandidate(learning, viewer, id);
  const text =
    action === "promote"
      ? markup`Promote candidate ${id} (${sequence(candidate)}, seen ${candidate.occurrences} times): it is registered as a composed skill of
          these tools and test-run once, or, when it overlaps one of your auto-created skills enough, becomes that skill's next version.`
      : markup`Dismiss candidate ${id} (${sequence(candidate)}): it is no longer offered; the same sequence does not come back as a new candidate.`;
  const fields =
    action === "promote"
      ? markup`<p>
          <label>Name <input name="name" id="promote-name" placeholder="${candidate.name}" /></label>
          <label>Description <input name="description" id="promote-description" size="60" placeholder="${candidate.description}" /></label>
          <br /><small>Both optional: empty keeps the derived ones shown.</small>
        </p>`
      : "";
  const body = markup`<p id="confirm-text">${text}</p>
    <form method="post" action="/console/candidates/actions" id="confirm-form">
      ${csrfField(viewer)}
      <input type="hidden" name="id" value="${id}" />
      <input type="hidden" name="action" value="${action}" />
      <input type="hidden" name="confirmed" value="yes" />
      ${fields}
      <button type="submit" id="confirm">Confirm: ${action}</button> <a href="/console/candidates">Cancel</a>
    </form>`;
  return page(`Confirm: ${action} candidate ${id}`, "candidates", viewer, body);
}

/** Runs a confirmed candidate action through LearningService, the same use cases as PromoteCandidate and DismissCandidate. */
export async function runCandidateAction(
  learning: LearningService,
  viewer: Viewer,
  id: number,
  action: CandidateAction,
  overrides: { name: string; description: string },
): Promise<void> {
  const context = { caller: viewer.caller };
  if (action === "dismiss") {
    learning.dismiss(id, context);
    return;
  }
  await learning.promote(id, overrides, context);
}
