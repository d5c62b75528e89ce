import type { RecentRuns, ReturnedFile } from "../../control/index.js";
import { markup, type SafeHtml } from "../html.js";
import { time } from "../layout.js";
import { byteSize } from "../../units/index.js";

/** Runs a skill's page lists (docs/console.md#recent-runs). */
export const RECENT_RUNS = 20;

/** Files a run's cell shows before folding the rest of its list. */
const SHOWN_FILES = 5;

type Run = RecentRuns["runs"][number];

function outcome(run: Run): SafeHtml {
  if (run.success) return markup`<span class="status-active">succeeded</span>`;
  return markup`<span class="warn">failed: ${outcomeCause(run)}</span>`;
}

/** A failed run's cause in one line: its summary, or the facts when a row has none. */
function outcomeCause(run: Run): string {
  if (run.errorSummary !== "") return run.errorSummary;
  return run.timedOut ? "timed out" : run.oomKilled ? "out of memory" : `exited ${run.exitCode}`;
}

/** The files a run returned: each listed one's path and size, then how many more and their bytes. */
function filesOf(run: Run): SafeHtml {
  const listed = run.outputFiles ?? [];
  const count = run.outputFileCount ?? 0;
  if (count === 0) return markup`<span class="empty">none</span>`;
  const listedBytes = listed.reduce((sum, file) => sum + file.sizeBytes, 0);
  const more = count - listed.length;
  const line = (file: ReturnedFile) =>
    markup`<div class="file" data-path="${file.path}">
      <code>${file.path}</code> ${byteSize(file.sizeBytes)}${file.truncated ? markup` <small>(truncated)</small>` : ""}
    </div>`;
  // A long list folds (no script needed): twenty runs of 64 files would bury the rest of the page.
  const folded = listed.slice(SHOWN_FILES);
  return markup`${listed.slice(0, SHOWN_FILES).map(line)}${
    folded.length > 0 ? markup`<details><summary>${folded.length} more listed</summary>${folded.map(line)}</details>` : ""
  }${
    more > 0
      ? markup`<div class="more">and ${more} more file${more === 1 ? "" : "s"} (${byteSize(Math.max(0, (run.outputFileBytes ?? 0) - listedBytes))})</div>`
      : ""
  }`;
}

/**
 * Why the skill last failed (ConsoleReads.lastFailure, docs/console.md#last-error): the run's one-line
 * cause and the end of its stderr, redacted as everything a run returns is. A status reason such as
 * "4 consecutive failed invocations" says that it fails; this says why.
 */
export function lastErrorSection(failure: Run | undefined, everyone: boolean): SafeHtml {
  if (!failure) {
    return markup`<section id="last-error">
      <h2>Last error</h2>
      <p class="empty">No failed run${everyone ? "" : " of yours"} yet: when a run fails, its cause and the end of its stderr show here.</p>
    </section>`;
  }
  const tail = failure.stderrTail ?? "";
  return markup`<section id="last-error">
    <h2>Last error</h2>
    <p>
      Run ${failure.id}, ${time(failure.at)}, v${failure.version}${everyone ? markup`, by ${failure.caller}` : ""}:
      <span class="warn" id="last-error-cause">${outcomeCause(failure)}</span>
    </p>
    ${
      tail === ""
        ? markup`<p class="empty">It wrote nothing on stderr.</p>`
        : markup`<p>The end of its stderr:</p>
            <pre class="code" id="last-error-stderr">${tail}</pre>`
    }
  </section>`;
}

/** A skill's recent runs with the files each returned (ConsoleReads.recentRuns). */
export function recentRunsSection(recent: RecentRuns): SafeHtml {
  const { runs, everyone } = recent;
  return markup`<section id="runs">
    <h2>Recent runs</h2>
    <p>
      The last ${RECENT_RUNS} ${everyone ? "runs, every caller's" : "of your own runs"}, newest first, with the files each returned: their names
      and sizes (the bytes went back to the caller and are not kept).
    </p>
    ${
      runs.length === 0
        ? markup`<p class="empty">No run yet: InvokeSkill adds them.</p>`
        : markup`<table>
            <thead>
              <tr>
                <th>Run</th>
                <th>When</th>
                <th>Version</th>
                ${everyone ? markup`<th>Caller</th>` : ""}
                <th>Outcome</th>
                <th class="num">ms</th>
                <th>Files</th>
              </tr>
            </thead>
            <tbody>
              ${runs.map(
                (run) =>
                  markup`<tr data-run="${run.id}">
                    <td>${run.id}</td>
                    <td>${time(run.at)}</td>
                    <td>v${run.version}</td>
                    ${everyone ? markup`<td>${run.caller}</td>` : ""}
                    <td>${outcome(run)}</td>
                    <td class="num">${run.durationMs}</td>
                    <td>${filesOf(run)}</td>
                  </tr>`,
              )}
            </tbody>
          </table>`
    }
  </section>`;
}
