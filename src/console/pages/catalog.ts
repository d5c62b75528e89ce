import type { SkillQueries, SkillRecord } from "../../control/index.js";
import type { SkillSources } from "../../sources/index.js";
import { markup, type SafeHtml } from "../html.js";
import { page, type Viewer } from "../layout.js";
import { skillHref } from "./skill.js";

/**
 * The catalog (GetCatalog's use case): every skill the viewer may see with its load status and what
 * blocks it, merged with the skill folders of the last scan (docs/skill-sources.md#catalog), and each
 * skill's health: "ready" says that its dependencies load, not that it works.
 */
export function catalogPage(queries: SkillQueries, sources: SkillSources, viewer: Viewer): string {
  const context = { caller: viewer.caller };
  const registered = queries.catalog(context);
  // The merge keeps the registry's entries first, in their order; the folders that are no skill (yet) follow.
  const entries = sources.catalog(registered);
  const skills = new Map(queries.list({ includeInactive: true }, context).map((skill) => [skill.name, skill]));
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
  const unhealthy = new Map<string, number>();
  for (const skill of skills.values()) {
    if (skill.status === "degraded" || skill.status === "deprecated") unhealthy.set(skill.status, (unhealthy.get(skill.status) ?? 0) + 1);
  }
  const body =
    entries.length === 0
      ? markup`<p class="empty" id="catalog-empty">
          The catalog is empty: register a skill and it is listed here with its dependency status.
        </p>`
      : markup`<p id="catalog-count">
            ${entries.length} entries: ${[...counts].map(([status, n], i) => markup`${i > 0 ? ", " : ""}${n} ${status}`)}.
            ${unhealthy.size === 0 ? "" : markup`Health: ${[...unhealthy].map(([status, n], i) => markup`${i > 0 ? ", " : ""}${n} ${status}`)}.`}
          </p>
          <table id="catalog">
            <thead>
              <tr>
                <th>Skill</th>
                <th>Kind</th>
                <th>Status</th>
                <th>Health</th>
                <th class="num">Version</th>
                <th>Depends on</th>
                <th>Blocked by</th>
                <th>Reason</th>
                <th>Folder</th>
              </tr>
            </thead>
            <tbody>
              ${entries.map(
                (e, i) =>
                  markup`<tr data-skill="${e.name}">
                    <td>${e.name === "" ? markup`<span class="empty">–</span>` : markup`<a href="${skillHref(e.name)}">${e.name}</a>`}</td>
                    <td>${e.kind}</td>
                    <td class="status-${e.status === "ready" ? "active" : e.status === "inactive" ? "retired" : "deprecated"}">
                      ${e.status}
                    </td>
                    <td class="health">${healthOf(i < registered.length ? skills.get(e.name) : undefined)}</td>
                    <td class="num">${e.version}</td>
                    <td>${e.dependsOn.join(", ")}</td>
                    <td>${e.blockedBy.join(", ")}</td>
                    <td>${e.error || e.reason}${e.warnings.map((w) => markup`<br /><span class="warn">${w}</span>`)}</td>
                    <td>${e.sourceFolder === "" ? "" : markup`<code>${e.sourceFolder}</code>`}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`;
  return page("Catalog", "catalog", viewer, body);
}

/** A listed skill's lifecycle status and why (docs/skill-lifecycle.md#statuses); a folder that is no skill has none. */
function healthOf(skill: SkillRecord | undefined): SafeHtml {
  if (!skill) return markup`<span class="empty">–</span>`;
  const why = skill.status !== "active" && skill.statusReason !== "" ? skill.statusReason : skill.healthWarning;
  return markup`<span class="status-${skill.status}">${skill.status}</span>${why === "" ? "" : markup` <small>(${why})</small>`}`;
}
