import { createTwoFilesPatch } from "diff";
import {
  canManage,
  type ControlPlane,
  deprecationRisk,
  isLiveStatus,
  pinnedVersionFor,
  type SkillGrant,
  type SkillQueries,
  type SkillRecord,
  type SourceWindow,
} from "../../control/index.js";
import { markup, jsonBlock, type SafeHtml } from "../html.js";
import { csrfField, page, percent, time, type Viewer } from "../layout.js";
import { dependencyGraph, sparkline } from "../svg.js";
import { timelineChart } from "../timeline.js";
import { riskText } from "./library.js";
import { lastErrorSection, RECENT_RUNS, recentRunsSection } from "./skill-runs.js";

/** Days the health timeline covers (docs/console.md#health-timeline). */
export const TIMELINE_DAYS = 30;

export const skillHref = (name: string): string => `/console/skills/${encodeURIComponent(name)}`;

/** The owner actions the console offers (docs/console.md#owner-actions), each behind a confirmation step. */
export const SKILL_ACTIONS = ["protect", "unprotect", "disable", "enable", "rollback", "retire", "restore"] as const;
export type SkillAction = (typeof SKILL_ACTIONS)[number];

/** A skill: its health timeline, durations, versions, dependencies and, for its owner or an admin, the actions. */
export async function skillPage(control: ControlPlane, viewer: Viewer, name: string, done?: SkillAction): Promise<string> {
  const { queries, consoleReads } = control;
  const context = { caller: viewer.caller };
  const { skill, kind: declaredKind, dependsOn, folder, code } = await queries.get({ name }, context);
  // One vocabulary with the library, the catalog and GetSkill: a folder skill is "directory" or "instructions".
  const kind = folder?.kind ?? declaredKind;
  const stats = queries.stats({ name }, context);
  const timeline = consoleReads.healthTimeline({ name, days: TIMELINE_DAYS }, context);
  const dependencies = queries.dependencies({ name }, context);
  const evidence = consoleReads.routingEvidence({ name }, context);
  const runs = consoleReads.recentRuns({ name, limit: RECENT_RUNS }, context);
  const lastFailure = consoleReads.lastFailure({ name }, context);
  const window = consoleReads.recentOutcomes({ skills: [skill] }, context).get(name) ?? [];
  const risk = deprecationRisk({ ...skill, window }, consoleReads.healthPolicy);
  const chart = timelineChart(timeline.since, TIMELINE_DAYS, timeline.days, timeline.versions);
  const invoked = chart.invocations.reduce((a, b) => a + b, 0);
  const manage = canManage(skill, viewer.caller);
  // Grants are the owner's and admins' to read (ListGrants' rule); anybody else does not get the section.
  const grants =
    viewer.caller.admin || skill.owner === viewer.caller.agentId ? control.access.sharing.grants(name, viewer.caller) : undefined;

  const facts = markup`<table class="facts" id="facts">
    <tbody>
      <tr>
        <th>Status</th>
        <td class="status-${skill.status}">${skill.status}${skill.statusReason ? markup` — ${skill.statusReason}` : ""}</td>
      </tr>
      <tr>
        <th>Owner</th>
        <td>${skill.owner} (${skill.visibility})</td>
      </tr>
      <tr>
        <th>Kind</th>
        <td>${kind}</td>
      </tr>
      <tr>
        <th>Version</th>
        <td>${skill.version} active, ${skill.latestVersion} latest</td>
      </tr>
      <tr>
        <th>Enabled</th>
        <td id="enabled">
          ${skill.enabled ? "yes" : markup`<span class="warn">no: switched off by ${skill.disabledBy}; neither routed nor invocable</span>`}
        </td>
      </tr>
      <tr>
        <th>Protected</th>
        <td>${skill.protected ? "yes: never deprecated by the window nor retired by the rule" : "no"}</td>
      </tr>
      <tr>
        <th>Window</th>
        <td>
          ${percent(stats.successRate)} (${stats.windowSuccesses} of ${stats.windowSamples})
          ${sparkline(window, consoleReads.healthPolicy.windowSize)}
        </td>
      </tr>
      <tr>
        <th>Warnings</th>
        <td>
          ${skill.healthWarning === "" ? markup`<span class="empty">none</span>` : markup`<span class="warn">${skill.healthWarning}</span>`}${dependencies.warnings.map(
            (w) => markup`<br /><span class="warn">${w}</span>`,
          )}
        </td>
      </tr>
      <tr>
        <th>Deprecation risk</th>
        <td id="risk">${riskText(risk)}</td>
      </tr>
      <tr>
        <th>Counters</th>
        <td>
          ${skill.usageCount} successful invocations in all; ${skill.failureCount} consecutive failures now; ${stats.totalInvocations}
          invocations of any version
        </td>
      </tr>
      <tr>
        <th>Routing evidence</th>
        <td id="evidence">${evidence} stored quer${evidence === 1 ? "y" : "ies"} route to this skill</td>
      </tr>
      <tr>
        <th>Registered</th>
        <td>${time(skill.createdAt)}; last invoked ${time(skill.lastInvokedAt)}</td>
      </tr>
      <tr>
        <th>Description</th>
        <td>${skill.description}</td>
      </tr>
    </tbody>
  </table>`;

  const timelineSection = markup`<section>
    <h2>Health timeline</h2>
    <p>
      Success rate per UTC day over the last ${TIMELINE_DAYS} days, all versions (solid) and each version (dashed); blue lines mark the
      versions committed in that time. ${invoked} invocation${invoked === 1 ? "" : "s"} in the period.
    </p>
    ${invoked === 0 ? markup`<p class="empty">No invocation in the last ${TIMELINE_DAYS} days: the chart fills in as InvokeSkill is called.</p>` : ""}
    <div class="timeline" id="timeline" data-timeline="timeline-data"></div>
    ${jsonBlock("timeline-data", chart)}
    <h3>Outcome sources</h3>
    ${outcomeSources(stats.bySource ?? [])}
    <h3>Durations</h3>
    ${
      timeline.durations.length === 0
        ? markup`<p class="empty">No invocation yet.</p>`
        : markup`<table id="durations">
            <thead>
              <tr>
                <th>Version</th>
                <th class="num">Invocations (last)</th>
                <th class="num">p50 ms</th>
                <th class="num">p95 ms</th>
                <th class="num">p99 ms</th>
              </tr>
            </thead>
            <tbody>
              ${timeline.durations.map(
                (d) =>
                  markup`<tr>
                    <td>v${d.version}</td>
                    <td class="num">${d.samples}</td>
                    <td class="num">${d.p50Ms}</td>
                    <td class="num">${d.p95Ms}</td>
                    <td class="num">${d.p99Ms}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;

  const versions = [...timeline.versions].reverse();
  const versionOptions = (selected: number) =>
    versions.map((v) => markup`<option value="${v.version}" ${v.version === selected ? "selected" : ""}>v${v.version}</option>`);
  const versionsSection = markup`<section>
    <h2>Versions</h2>
    <table id="versions">
      <thead>
        <tr>
          <th>Version</th>
          <th>Origin</th>
          <th>Committed</th>
          <th>Content hash</th>
          <th></th>
        </tr>
      </thead>
      <tbody>
        ${versions.map(
          (v) =>
            markup`<tr>
              <td>v${v.version}${v.version === skill.version ? markup` <strong>active</strong>` : ""}</td>
              <td>${v.origin}</td>
              <td>${time(v.createdAt)}</td>
              <td><code>${v.contentHash.slice(0, 12)}</code></td>
              <td>${v.description === skill.description ? "" : markup`<small>${v.description}</small>`}</td>
            </tr>`,
        )}
      </tbody>
    </table>
    ${
      versions.length < 2
        ? markup`<p class="empty">One version so far: a new registration or a patch adds the next, and then two can be compared.</p>`
        : markup`<form class="filters" method="get" action="${skillHref(name)}/diff" id="diff-form">
            <label
              >From
              <select name="from">
                ${versionOptions(versions[1]?.version ?? 1)}
              </select></label
            ><label
              >To
              <select name="to">
                ${versionOptions(skill.latestVersion)}
              </select></label
            ><button type="submit">Compare</button>
          </form>`
    }
  </section>`;

  const graphSection = markup`<section>
    <h2>Dependencies</h2>
    ${dependencyGraph(name, dependsOn, dependencies.dependents, skillHref)}${
      dependencies.loadOrder.length > 1 ? markup`<p>Load order: ${dependencies.loadOrder.join(" → ")}</p>` : ""
    }
  </section>`;

  const grantsSection = grants === undefined ? markup`` : grantsOf(grants);
  const actionsSection = manage ? actionsOf(skill, viewer) : markup``;
  const notice = done === undefined ? "" : doneNotice(skill, done);
  const codeSection = codeOf(kind, pinnedVersionFor(skill, viewer.caller) ?? skill.version, code);
  const body = markup`${notice ? markup`<p class="notice" id="notice">${notice}</p>` : ""}${facts}${lastErrorSection(lastFailure, runs.everyone)}${codeSection}${timelineSection}${recentRunsSection(runs)}${versionsSection}${graphSection}${grantsSection}${actionsSection}`;
  return page(`Skill ${name}`, "library", viewer, body, { charts: true });
}

/** The code the viewer's runs use, as GetSkill answers it: what each kind keeps as its code. */
function codeOf(kind: string, version: number, code: string): SafeHtml {
  const what: Record<string, string> = {
    composed: "its definition (JSON)",
    directory: "its folder's entrypoint",
    instructions: "its folder's SKILL.md",
  };
  const lines = code === "" ? 0 : code.replace(/\n$/, "").split("\n").length;
  return markup`<section id="code-section">
    <h2>Code</h2>
    <p>v${version}, ${what[kind] ?? "the Python program"}: ${lines} line${lines === 1 ? "" : "s"}.</p>
    <pre class="code" id="code"><code>${code}</code></pre>
  </section>`;
}

/** The window's samples by where their verdict came from (GetSkillStats' success_by_source, docs/learning.md#outcomes). */
function outcomeSources(bySource: readonly SourceWindow[]): SafeHtml {
  const total = bySource.reduce((n, s) => n + s.samples, 0);
  if (total === 0)
    return markup`<p class="empty" id="outcome-sources">
      No sample in the window yet: invocations, RecordSkillOutcome and recorded sessions add them.
    </p>`;
  const labels: Record<string, string> = {
    exit_code: "exit code",
    explicit: "explicit (RecordSkillOutcome)",
    implicit: "implicit (recorded sessions)",
  };
  return markup`<table id="outcome-sources">
    <thead>
      <tr>
        <th>Source</th>
        <th class="num">Samples in the window</th>
        <th class="num">Successes</th>
        <th class="num">Success rate</th>
        <th class="num">Weight each</th>
      </tr>
    </thead>
    <tbody>
      ${bySource.map(
        (s) =>
          markup`<tr data-source="${s.source}">
            <td>${labels[s.source] ?? s.source}</td>
            <td class="num">${s.samples}</td>
            <td class="num">${s.successes}</td>
            <td class="num">${s.samples === 0 ? "–" : percent(s.successes / s.samples)}</td>
            <td class="num">${s.samples === 0 ? "–" : String(s.weight)}</td>
          </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Who else may use the skill (ListGrants), for its owner and admins. */
function grantsOf(grants: readonly SkillGrant[]): SafeHtml {
  return markup`<section id="grants">
    <h2>Grants</h2>
    ${
      grants.length === 0
        ? markup`<p class="empty">No grant: only the owner (and everyone, if it is public) may use it. GrantSkill (skillctl grant) shares it with one agent or user.</p>`
        : markup`<table>
            <thead>
              <tr>
                <th>Grantee</th>
                <th>Version</th>
                <th>Granted by</th>
                <th>Granted</th>
              </tr>
            </thead>
            <tbody>
              ${grants.map(
                (g) =>
                  markup`<tr data-grantee="${g.grantee}">
                    <td>${g.granteeKind} ${g.grantee}</td>
                    <td>${g.version === undefined ? "follows the active version" : `pinned to v${g.version}`}</td>
                    <td>${g.grantedBy}</td>
                    <td>${time(g.grantedAt)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}

function actionsOf(skill: SkillRecord, viewer: Viewer): SafeHtml {
  const link = (action: SkillAction, label: string) =>
    markup`<a class="action" data-action="${action}" href="${skillHref(skill.name)}/confirm?action=${action}">${label}</a> `;
  const live = isLiveStatus(skill.status);
  const rollbackTargets = Array.from({ length: skill.latestVersion }, (_, i) => i + 1).filter((v) => v !== skill.version);
  return markup`<section class="actions" id="actions">
    <h2>Owner actions</h2>
    <p>
      ${skill.protected ? link("unprotect", "Unprotect") : link("protect", "Protect")}
      ${skill.enabled ? link("disable", "Disable") : link("enable", "Enable")}
      ${live ? link("retire", "Retire") : link("restore", "Restore")}
    </p>
    ${
      live && rollbackTargets.length > 0
        ? markup`<form class="filters" method="get" action="${skillHref(skill.name)}/confirm">
            <input type="hidden" name="action" value="rollback" /><label
              >Roll back to
              <select name="version">
                ${rollbackTargets.map((v) => markup`<option value="${v}">v${v}</option>`)}
              </select></label
            ><button type="submit">Roll back…</button>
          </form>`
        : ""
    }
    <p><small>Every action asks for confirmation first. Signed in as ${viewer.caller.agentId}.</small></p>
  </section>`;
}

/** What an action does, in words, for its confirmation page. */
function describeAction(skill: SkillRecord, action: SkillAction, version: number | undefined): string {
  switch (action) {
    case "protect":
      return `Protect ${skill.name}: the rolling window never deprecates it and the retirement rule never retires it.`;
    case "unprotect":
      return `Unprotect ${skill.name}: its health is judged again at once, so a window below the threshold deprecates it now.`;
    case "disable":
      return `Disable ${skill.name}: it keeps its versions, grants and history but is neither routed nor invocable until enabled again.`;
    case "enable":
      return `Enable ${skill.name}: it is routed and invocable again.`;
    case "rollback":
      return `Roll ${skill.name} back from v${skill.version} to v${version ?? "?"}: no test run; that version's window counts again.`;
    case "retire":
      return `Retire ${skill.name}: it stops being invocable and routed; its files move to retired/ and Restore brings it back.`;
    case "restore":
      return `Restore ${skill.name}: its files come back and its health is judged at once.`;
  }
}

/** The confirmation step: a page that says what will happen and holds the one form that does it. */
export async function confirmPage(
  queries: SkillQueries,
  viewer: Viewer,
  name: string,
  action: SkillAction,
  version: number | undefined,
): Promise<string> {
  const { skill } = await queries.get({ name }, { caller: viewer.caller });
  const body = markup`<p id="confirm-text">${describeAction(skill, action, version)}</p>
    <form method="post" action="${skillHref(name)}/actions" id="confirm-form">
      ${csrfField(viewer)}
      <input
        type="hidden"
        name="action"
        value="${action}"
      />${version === undefined ? "" : markup`<input type="hidden" name="version" value="${version}" />`}
      <input type="hidden" name="confirmed" value="yes" />
      <button type="submit" id="confirm">Confirm: ${action}</button> <a href="${skillHref(name)}">Cancel</a>
    </form>`;
  return page(`Confirm: ${action} ${name}`, "library", viewer, body);
}

/**
 * Runs a confirmed owner action through the same use cases as the RPCs. What the page then says is
 * derived from the action's name and the skill as it is now, never taken from the request, so a
 * crafted link cannot put words on the page.
 */
export async function runAction(
  control: ControlPlane,
  viewer: Viewer,
  name: string,
  action: SkillAction,
  version: number | undefined,
): Promise<void> {
  const context = { caller: viewer.caller };
  switch (action) {
    case "protect":
    case "unprotect":
      await control.lifecycle.setProtected({ name, pinned: action === "protect" }, context);
      return;
    case "disable":
    case "enable":
      // SetSkillEnabled's use case (docs/security.md#the-onoff-switch).
      await control.access.sharing.setEnabled(name, action === "enable", viewer.caller);
      return;
    case "rollback":
      await control.patching.rollback({ name, version: version ?? 0 }, context);
      return;
    case "retire":
      await control.lifecycle.retire({ name }, context);
      return;
    case "restore":
      await control.lifecycle.restore({ name }, context);
      return;
  }
}

/** The notice after an action, from the skill as it is now. */
function doneNotice(skill: SkillRecord, action: SkillAction): string {
  switch (action) {
    case "protect":
      return `${skill.name} is protected.`;
    case "unprotect":
      return `${skill.name} is no longer protected; it is ${skill.status}.`;
    case "disable":
      return `${skill.name} is disabled; Enable switches it back on.`;
    case "enable":
      return `${skill.name} is enabled.`;
    case "rollback":
      return `${skill.name} is at v${skill.version} again.`;
    case "retire":
      return `${skill.name} is retired; Restore brings it back.`;
    case "restore":
      return `${skill.name} is restored; it is ${skill.status}.`;
  }
}

function lineClass(line: string): string {
  if (line.startsWith("+++") || line.startsWith("---")) return "file";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  if (line.startsWith("@@")) return "hunk";
  return "context";
}

/** Two versions side by side as a unified diff (jsdiff). */
export async function diffPage(queries: SkillQueries, viewer: Viewer, name: string, from: number, to: number): Promise<string> {
  const context = { caller: viewer.caller };
  const [before, after] = await Promise.all([
    queries.versionCode({ name, version: from }, context),
    queries.versionCode({ name, version: to }, context),
  ]);
  const patch = createTwoFilesPatch(`${name} v${from}`, `${name} v${to}`, before, after, "", "", { context: 3 });
  // The "====" rule above the file names says nothing here; the trailing newline leaves an empty last line.
  const lines = patch
    .split("\n")
    .slice(1)
    .filter((line, i, all) => i < all.length - 1 || line !== "");
  // One block element per line: the page never relies on literal newlines inside the markup.
  const rendered = lines.map((line) => markup`<span class="${lineClass(line)}">${line}</span>`);
  const changed = lines.some((l) => l.startsWith("@@"));
  const body = markup`<p><a href="${skillHref(name)}">← back to ${name}</a></p>
    ${
      changed
        ? markup`<div class="diff" id="diff">${rendered}</div>`
        : markup`<p class="empty" id="diff">v${from} and v${to} have the same code.</p>`
    }`;
  return page(`${name}: v${from} → v${to}`, "library", viewer, body);
}
