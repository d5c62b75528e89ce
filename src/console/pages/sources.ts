import type { SkillSources } from "../../sources/index.js";
import { markup } from "../html.js";
import { page, time, type Viewer } from "../layout.js";
import { skillHref } from "./skill.js";

/** The CSS class of a folder's status: ready reads as active, the refusals as warnings. */
const STATUS_CLASS: Record<string, string> = {
  ready: "active",
  discovered: "degraded",
  shadowed: "deprecated",
  blocked: "deprecated",
  failed: "deprecated",
};

/**
 * The skill folders (ListSkillSources' use case): every folder the last scan found under the
 * configured directories, with its status and why it is blocked, failed or shadowed.
 */
export function sourcesPage(sources: SkillSources, viewer: Viewer): string {
  const scan = sources.lastScan;
  const roots = [...sources.roots];
  const counts = new Map<string, number>();
  for (const e of scan.entries) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
  const problems =
    scan.problems.length === 0
      ? ""
      : markup`<ul id="source-problems">
          ${scan.problems.map((p) => markup`<li class="warn">${p.root}: ${p.reason}</li>`)}
        </ul>`;
  const body =
    roots.length === 0
      ? markup`<p class="empty" id="sources-empty">
          No skill directory is configured: set SKILL_ENGINE_SKILL_DIRS to folders holding one SKILL.md folder per skill.
        </p>`
      : markup`<p id="sources-count">
            ${scan.entries.length} folder${scan.entries.length === 1 ? "" : "s"} under ${roots.join(", ")}${
              scan.entries.length === 0 ? "" : markup`: ${[...counts].map(([status, n], i) => markup`${i > 0 ? ", " : ""}${n} ${status}`)}`
            }. The last scan took ${Math.round(scan.durationMs)} ms; it is rerun when a folder changes, on SIGHUP and by RescanSkillDirs.
            Shown ${time(Date.now())}.
          </p>
          ${problems}
          ${
            scan.entries.length === 0
              ? markup`<p class="empty" id="sources-none">
                  No folder found yet: put a folder with a SKILL.md in one of these directories.
                </p>`
              : markup`<table id="sources">
                  <thead>
                    <tr>
                      <th>Directory</th>
                      <th>Folder</th>
                      <th>Skill</th>
                      <th>Id</th>
                      <th>Kind</th>
                      <th>Status</th>
                      <th class="num">Version</th>
                      <th>Reason</th>
                    </tr>
                  </thead>
                  <tbody>
                    ${scan.entries.map(
                      (e) =>
                        markup`<tr data-folder="${e.folder}" data-status="${e.status}">
                          <td>${e.root}</td>
                          <td><code>${e.folder}</code></td>
                          <td>${e.name === "" ? markup`<span class="empty">–</span>` : e.status === "ready" ? markup`<a href="${skillHref(e.name)}">${e.name}</a>` : e.name}</td>
                          <td><code>${e.skillId}</code></td>
                          <td>${e.kind}</td>
                          <td class="status-${STATUS_CLASS[e.status] ?? "deprecated"}">${e.status}</td>
                          <td class="num">${e.version === 0 ? "–" : e.version}</td>
                          <td class="reason">${e.reason}</td>
                        </tr>`,
                    )}
                  </tbody>
                </table>`
          }`;
  return page("Sources", "sources", viewer, body);
}
