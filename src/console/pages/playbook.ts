import type { LessonView, PlaybookService } from "../../playbook/index.js";
import { markup, type SafeHtml } from "../html.js";
import { csrfField, page, time, type Viewer } from "../layout.js";

/** Lessons shown at most (ListLessons' own maximum). */
const LESSONS_SHOWN = 1_000;

function lessonTable(lessons: readonly LessonView[], id: string): SafeHtml {
  return markup`<table id="${id}">
    <thead>
      <tr>
        <th>Lesson</th>
        <th>Owner</th>
        <th>Trigger</th>
        <th>Domains</th>
        <th class="num">Utility</th>
        <th class="num">Hit rate</th>
        <th class="num">Retrievals (helpful)</th>
        <th>Verified</th>
        <th>Pinned</th>
        <th>State</th>
        <th>Added</th>
      </tr>
    </thead>
    <tbody>
      ${lessons.map(
        (l) =>
          markup`<tr data-lesson="${l.id}">
            <td><code>${l.id.slice(0, 12)}</code></td>
            <td>${l.owner}</td>
            <td>${l.trigger.length > 120 ? `${l.trigger.slice(0, 119)}…` : l.trigger}</td>
            <td>${l.domains.join(", ")}</td>
            <td class="num">${l.utility.toFixed(2)}</td>
            <td class="num">${Math.round(l.hitRate * 100)}%</td>
            <td class="num">${l.retrievals} (${l.helpfulRetrievals})</td>
            <td>${l.verified ? "yes" : "no"}</td>
            <td>${l.pinned ? "yes" : "no"}</td>
            <td>${l.state}${l.archivedReason ? ` (${l.archivedReason})` : ""}</td>
            <td>${time(l.createdAt)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** The playbook: the viewer's lessons (an admin's: everyone's), highest utility first, and the prune dry run. */
export function playbookPage(playbook: PlaybookService, viewer: Viewer): string {
  const lessons = playbook.list({ scope: "all", domain: "", limit: LESSONS_SHOWN, includeInactive: false, owner: "" }, viewer.caller);
  const body = markup`<p>
      ${lessons.length} active lesson${lessons.length === 1 ? "" : "s"}${viewer.caller.admin ? " across every agent" : " in your playbook"}.
      Utility and hit rate as docs/playbook.md defines them.
    </p>
    ${lessons.length === 0 ? markup`<p class="empty" id="playbook-empty">No lessons yet: AddLesson (or skillctl lessons add) records one after a solved task.</p>` : lessonTable(lessons, "lessons")}
    <section>
      <h2>Prune</h2>
      <p>Archives lessons that were shown often and never helped (never verified or pinned ones). First see what it would archive:</p>
      <form method="post" action="/console/playbook/prune" id="prune-form">
        ${csrfField(viewer)}<input type="hidden" name="dry_run" value="yes" /><button type="submit" id="prune-dry-run">Dry run…</button>
      </form>
    </section>`;
  return page("Playbook", "playbook", viewer, body);
}

/** After a dry run: what would be archived, and the confirmation that archives it. */
export async function pruneResultPage(playbook: PlaybookService, viewer: Viewer, dryRun: boolean): Promise<string> {
  const lessons = await playbook.prune({ minRetrievals: 0, maxDropFraction: undefined, dryRun }, viewer.caller);
  const body = dryRun
    ? markup`<p id="prune-summary">A prune now would archive ${lessons.length} lesson${lessons.length === 1 ? "" : "s"}.</p>
        ${
          lessons.length === 0
            ? markup`<p class="empty">Nothing to prune. <a href="/console/playbook">Back to the playbook</a></p>`
            : markup`${lessonTable(lessons, "prune-preview")}
                <form method="post" action="/console/playbook/prune" id="prune-confirm-form">
                  ${csrfField(viewer)}<input type="hidden" name="dry_run" value="no" /><input
                    type="hidden"
                    name="confirmed"
                    value="yes"
                  /><button type="submit" id="confirm">Confirm: archive ${lessons.length}</button> <a href="/console/playbook">Cancel</a>
                </form>`
        }`
    : markup`<p class="notice" id="prune-summary">
          Archived ${lessons.length} lesson${lessons.length === 1 ? "" : "s"}; RestoreLesson brings one back.
        </p>
        <p><a href="/console/playbook">Back to the playbook</a></p>`;
  return page(dryRun ? "Prune: dry run" : "Pruned", "playbook", viewer, body);
}
