import {
  deprecationRisk,
  type LibraryKind,
  type ControlPlane,
  type HealthPolicy,
  type SkillRecord,
  type SkillStatus,
  windowRate,
} from "../../control/index.js";
import { markup, type SafeHtml } from "../html.js";
import { page, percent, time, type Viewer } from "../layout.js";
import { sparkline } from "../svg.js";

/** Rows per library page: the page's cost grows with this, not with the library (docs/console.md#library). */
export const LIBRARY_PAGE_SIZE = 100;

const STATUS_FILTERS = ["live", "active", "degraded", "deprecated", "retired", "deleted", "all"] as const;
const KIND_FILTERS: ReadonlyArray<LibraryKind | ""> = ["", "plain", "composed", "directory", "instructions"];

export interface LibraryQuery {
  readonly status: string;
  readonly owner: string;
  readonly kind: string;
  readonly page: number;
}

export function parseLibraryQuery(params: URLSearchParams): LibraryQuery {
  const status = params.get("status") ?? "live";
  const kind = params.get("kind") ?? "";
  const pageNumber = Number.parseInt(params.get("page") ?? "1", 10);
  return {
    status: (STATUS_FILTERS as readonly string[]).includes(status) ? status : "live",
    owner: (params.get("owner") ?? "").trim(),
    kind: (KIND_FILTERS as readonly string[]).includes(kind) ? kind : "",
    page: Number.isFinite(pageNumber) && pageNumber >= 1 ? pageNumber : 1,
  };
}

/**
 * The library: every skill the viewer may see (ListSkills' use case), filtered, one page of rows
 * with the rolling window's rate and sparkline, warnings and deprecation risk.
 */
export function libraryPage(control: ControlPlane, viewer: Viewer, query: LibraryQuery): string {
  const { queries, consoleReads } = control;
  const context = { caller: viewer.caller };
  const inactive = query.status !== "live" && query.status !== "active" && query.status !== "degraded" && query.status !== "deprecated";
  let skills = queries.list({ includeInactive: inactive, ...(query.owner === "" ? {} : { owner: query.owner }) }, context);
  const owners = [...new Set(skills.map((s) => s.owner))].sort();
  if (query.status !== "live" && query.status !== "all") skills = skills.filter((s) => s.status === (query.status as SkillStatus));
  // Kinds cost one lookup a skill: for the whole list only when filtering by kind, else for the page.
  let kinds: Map<string, LibraryKind> | undefined;
  if (query.kind !== "") {
    kinds = consoleReads.kinds({ skills }, context);
    skills = skills.filter((s) => kinds?.get(s.name) === query.kind);
  }
  const total = skills.length;
  const pages = Math.max(1, Math.ceil(total / LIBRARY_PAGE_SIZE));
  const current = Math.min(query.page, pages);
  const shown = skills.slice((current - 1) * LIBRARY_PAGE_SIZE, current * LIBRARY_PAGE_SIZE);
  kinds ??= consoleReads.kinds({ skills: shown }, context);
  const windows = consoleReads.recentOutcomes({ skills: shown }, context);
  const policy = consoleReads.healthPolicy;

  const rows = shown.map((skill) => row(skill, kinds?.get(skill.name) ?? "plain", windows.get(skill.name) ?? [], policy));
  const filters = markup`<form class="filters" method="get" action="/console/library">
    <label
      >Status
      <select name="status">
        ${STATUS_FILTERS.map(
          (s) =>
            markup`<option value="${s}" ${s === query.status ? "selected" : ""}>
              ${s === "live" ? "live (active, degraded, deprecated)" : s}
            </option>`,
        )}
      </select></label
    >
    <label
      >Owner
      <select name="owner">
        <option value="">anyone</option>
        ${(query.owner !== "" && !owners.includes(query.owner) ? [...owners, query.owner] : owners).map(
          (o) => markup`<option value="${o}" ${o === query.owner ? "selected" : ""}>${o}</option>`,
        )}
      </select></label
    >
    <label
      >Kind
      <select name="kind">
        ${KIND_FILTERS.map((k) => markup`<option value="${k}" ${k === query.kind ? "selected" : ""}>${k === "" ? "any" : k}</option>`)}
      </select></label
    >
    <button type="submit">Filter</button>
  </form>`;
  const pager = pagerOf(query, current, pages);
  const body =
    total === 0
      ? markup`${filters}
          <p class="empty" id="library-empty">
            No skill matches these filters.
            ${
              query.status === "live" && query.owner === "" && query.kind === ""
                ? "Register one with RegisterSkill (or skillctl register) and it shows up here."
                : "Widen the filters (status “all” includes retired and deleted skills)."
            }
          </p>`
      : markup`${filters}
          <p id="library-count">
            ${total} skill${total === 1 ? "" : "s"}; showing
            ${(current - 1) * LIBRARY_PAGE_SIZE + 1}–${(current - 1) * LIBRARY_PAGE_SIZE + shown.length}. Window: the last
            ${policy.windowSize} invocations of the active version, judged from ${policy.minWindowSamples}.
          </p>
          <table id="library">
            <thead>
              <tr>
                <th>Skill</th>
                <th>Owner</th>
                <th>Kind</th>
                <th>Status</th>
                <th class="num">Version</th>
                <th class="num">Window rate</th>
                <th>Recent outcomes</th>
                <th>Warnings</th>
                <th>Deprecation risk</th>
                <th>Last invoked</th>
              </tr>
            </thead>
            <tbody>
              ${rows}
            </tbody>
          </table>
          ${pager}`;
  return page("Library", "library", viewer, body);
}

function row(skill: SkillRecord, kind: LibraryKind, window: readonly boolean[], policy: HealthPolicy): SafeHtml {
  const rate = windowRate({ samples: window.length, successes: window.filter(Boolean).length }, policy);
  const risk = deprecationRisk({ ...skill, window }, policy);
  const warnings: Array<SafeHtml | string> = [];
  if (skill.healthWarning !== "") warnings.push(markup`<span class="warn">${skill.healthWarning}</span>`);
  if (skill.protected) warnings.push("protected");
  if (skill.statusReason !== "" && skill.status !== "active") warnings.push(skill.statusReason);
  return markup`<tr data-skill="${skill.name}">
    <td><a href="/console/skills/${encodeURIComponent(skill.name)}">${skill.name}</a></td>
    <td>${skill.owner}${skill.visibility === "private" ? " (private)" : ""}</td>
    <td>${kind}</td>
    <td class="status-${skill.status}">${skill.status}</td>
    <td class="num">${skill.version}</td>
    <td class="num">
      ${percent(rate)}${rate === undefined && window.length > 0 ? markup` <small>(${window.length}/${policy.minWindowSamples})</small>` : ""}
    </td>
    <td>${sparkline(window, policy.windowSize)}</td>
    <td>${warnings.map((w, i) => markup`${i > 0 ? "; " : ""}${w}`)}</td>
    <td>${riskText(risk)}</td>
    <td>${time(skill.lastInvokedAt)}</td>
  </tr>`;
}

export function riskText(risk: ReturnType<typeof deprecationRisk>): SafeHtml {
  if (!risk.next) return markup`<span class="empty">–</span>`;
  const next =
    risk.next.failures === 0
      ? markup`<span class="warn">eligible for retirement now</span>`
      : markup`${risk.next.threshold} in ${risk.next.failures} failure${risk.next.failures === 1 ? "" : "s"}`;
  const deprecated =
    risk.untilDeprecated !== undefined && risk.next.threshold !== "deprecated" ? markup`; deprecated in ${risk.untilDeprecated}` : "";
  return markup`${next}${deprecated}`;
}

function pagerOf(query: LibraryQuery, current: number, pages: number): SafeHtml {
  if (pages <= 1) return markup``;
  const link = (n: number, label: string) => {
    const params = new URLSearchParams({ status: query.status, owner: query.owner, kind: query.kind, page: String(n) });
    return markup`<a href="/console/library?${params.toString()}">${label}</a>`;
  };
  return markup`<p class="pager">
    ${current > 1 ? link(current - 1, "← previous") : ""} page ${current} of ${pages} ${current < pages ? link(current + 1, "next →") : ""}
  </p>`;
}
