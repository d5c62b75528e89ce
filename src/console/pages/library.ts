import {
  deprecationRisk,
  type LibraryKind,
  type ControlPlane,
  type HealthPolicy,
  type SkillRecord,
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
  /** The page after this name (next →), or … */
  readonly after: string;
  /** … the page before this name (← previous); neither: the first page. */
  readonly before: string;
}

export function parseLibraryQuery(params: URLSearchParams): LibraryQuery {
  const status = params.get("status") ?? "live";
  const kind = params.get("kind") ?? "";
  const before = params.get("before") ?? "";
  return {
    status: (STATUS_FILTERS as readonly string[]).includes(status) ? status : "live",
    owner: (params.get("owner") ?? "").trim(),
    kind: (KIND_FILTERS as readonly string[]).includes(kind) ? kind : "",
    after: before === "" ? (params.get("after") ?? "") : "",
    before,
  };
}

/**
 * The library: the skills the viewer may see, filtered, one page of rows with the rolling window's
 * rate and sparkline, warnings and deprecation risk. The page is one query (filters, kind and the
 * name cursor in SQL) and one window lookup a row, so its cost follows the page, not the library:
 * it pages by name (next and previous) rather than counting every match (docs/console.md#library).
 */
export function libraryPage(control: ControlPlane, viewer: Viewer, query: LibraryQuery): string {
  const { consoleReads } = control;
  const context = { caller: viewer.caller };
  const { rows: found, more } = consoleReads.libraryPage(
    {
      status: query.status,
      owner: query.owner === "" ? undefined : query.owner,
      kind: query.kind === "" ? undefined : (query.kind as LibraryKind),
      after: query.after === "" ? undefined : query.after,
      before: query.before === "" ? undefined : query.before,
      size: LIBRARY_PAGE_SIZE,
    },
    context,
  );
  const shown = found.map((r) => r.skill);
  const windows = consoleReads.recentOutcomes({ skills: shown }, context);
  const policy = consoleReads.healthPolicy;

  const rows = found.map(({ skill, kind }) => row(skill, kind, windows.get(skill.name) ?? [], policy));
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
    <label>Owner <input type="text" name="owner" value="${query.owner}" placeholder="anyone (an agent id)" /></label>
    <label
      >Kind
      <select name="kind">
        ${KIND_FILTERS.map((k) => markup`<option value="${k}" ${k === query.kind ? "selected" : ""}>${k === "" ? "any" : k}</option>`)}
      </select></label
    >
    <button type="submit">Filter</button>
  </form>`;
  // Another page exists before this one when this one was reached from a cursor; after it, when
  // the query saw one more row forwards (or this page was reached backwards from a later one).
  const first = shown[0]?.name;
  const last = shown.at(-1)?.name;
  const hasPrevious = query.before !== "" ? more : query.after !== "";
  const hasNext = query.before !== "" ? true : more;
  const pager = pagerOf(query, first !== undefined && hasPrevious ? first : undefined, last !== undefined && hasNext ? last : undefined);
  const body =
    shown.length === 0
      ? markup`${filters}
          <p class="empty" id="library-empty">
            ${
              query.after !== "" || query.before !== ""
                ? markup`No skill matches these filters on this side of “${query.after || query.before}”:
                    <a id="library-first" href="/console/library?${new URLSearchParams({ status: query.status, owner: query.owner, kind: query.kind }).toString()}"
                      >the first page</a
                    >.`
                : query.status === "live" && query.owner === "" && query.kind === ""
                  ? "No skill matches these filters. Register one with RegisterSkill (or skillctl register) and it shows up here."
                  : "No skill matches these filters. Widen them (status “all” includes retired and deleted skills)."
            }
          </p>`
      : markup`${filters}
          <p id="library-count">
            Skills ${first} to ${last} (${shown.length}, by name, ${LIBRARY_PAGE_SIZE} a page). Window: the last
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
  // Every untouched skill is the same distance from every threshold: say what is true of this one.
  if (risk.noRuns && risk.next && risk.next.failures > 0) return markup`<span class="empty">no runs yet</span>`;
  if (!risk.next) return markup`<span class="empty">–</span>`;
  const next =
    risk.next.failures === 0
      ? markup`<span class="warn">eligible for retirement now</span>`
      : markup`${risk.next.threshold} in ${risk.next.failures} failure${risk.next.failures === 1 ? "" : "s"}`;
  const deprecated =
    risk.untilDeprecated !== undefined && risk.next.threshold !== "deprecated" ? markup`; deprecated in ${risk.untilDeprecated}` : "";
  return markup`${next}${deprecated}`;
}

/** Links to the pages before and after this one (by the names at its ends), and to the first page. */
function pagerOf(query: LibraryQuery, before: string | undefined, after: string | undefined): SafeHtml {
  if (before === undefined && after === undefined) return markup``;
  const link = (cursor: Record<string, string>, label: string, id: string) => {
    const params = new URLSearchParams({ status: query.status, owner: query.owner, kind: query.kind, ...cursor });
    return markup`<a id="${id}" href="/console/library?${params.toString()}">${label}</a>`;
  };
  return markup`<p class="pager">
    ${before !== undefined ? markup`${link({}, "« first", "library-first")} ${link({ before }, "← previous", "library-previous")}` : ""}
    ${after !== undefined ? link({ after }, "next →", "library-next") : ""}
  </p>`;
}
