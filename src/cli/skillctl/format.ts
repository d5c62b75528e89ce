import { type ExecutionResult } from "../../gen/skillengine/v1/execution.js";
import { type SimilarSkill } from "../../gen/skillengine/v1/learning.js";
import { type GuardFinding } from "../../gen/skillengine/v1/registration.js";
import {
  type GetSkillStatsResponse,
  type Skill,
  type SkillStatus,
  skillStatusToJSON,
  type SkillVersion,
  type Visibility,
  visibilityToJSON,
} from "../../gen/skillengine/v1/skills.js";

/** Where a command writes; the entry point binds it to the process, tests could bind it to buffers. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress lines go there only then. */
  readonly errIsTty: boolean;
}

/** JSON for scripts: every field present (unset messages and timestamps as null), enums by name. */
export function toJson(value: unknown): string {
  return `${JSON.stringify(value, (_key, v: unknown) => (v === undefined ? null : v), 2)}\n`;
}

export function statusName(status: SkillStatus): string {
  return skillStatusToJSON(status)
    .replace(/^SKILL_STATUS_/, "")
    .toLowerCase();
}

/** `private` or `public`. */
export function visibilityName(visibility: Visibility): string {
  return visibilityToJSON(visibility)
    .replace(/^VISIBILITY_/, "")
    .toLowerCase();
}

/** A Skill with its status and visibility by name, for --json output. */
export function skillJson(skill: Skill | undefined): unknown {
  return skill === undefined ? null : { ...skill, status: skillStatusToJSON(skill.status), visibility: visibilityToJSON(skill.visibility) };
}

/**
 * A progress line on stderr (stdout stays clean for --json). On a terminal it is one line rewritten in
 * place and erased by `done`; elsewhere (CI logs) it is a plain line when `plain` is set, else nothing.
 */
export function progress(io: Io, plain: boolean): { show(text: string): void; done(): void } {
  let shown = false;
  return {
    show(text) {
      if (io.errIsTty) {
        io.err(`\r\x1b[K${text}`);
        shown = true;
      } else if (plain) {
        io.err(`${text}\n`);
      }
    },
    done() {
      if (shown) io.err("\r\x1b[K");
      shown = false;
    },
  };
}

export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .map((line) => `${line}\n`)
    .join("");
}

export function oneLine(text: string, max = 60): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

function date(value: Date | undefined): string {
  return value === undefined ? "-" : value.toISOString();
}

/** `name v3 (active)`. */
export function skillLine(skill: Skill | undefined): string {
  if (skill === undefined) return "(no skill in the answer)";
  return `${skill.name} v${skill.version} (${statusName(skill.status)})`;
}

export function skillDetails(skill: Skill): string {
  const rows: [string, string][] = [
    ["name", skill.name],
    ["description", skill.description],
    ["status", statusName(skill.status) + (skill.statusReason ? ` — ${skill.statusReason}` : "")],
    ["version", `${skill.version}${skill.latestVersion > skill.version ? ` (latest ${skill.latestVersion})` : ""}`],
    ["content hash", skill.contentHash],
    ["schema", skill.parametersSchema],
    ["usage", `${skill.usageCount} successful invocations, ${skill.failureCount} consecutive failures`],
    ["owner", skill.owner],
    ["visibility", visibilityName(skill.visibility)],
    ["protected", skill.protected ? "yes" : "no"],
    ["system", skill.system ? "yes (changed only by admins)" : "no"],
    ["enabled", skill.disabled ? `no (switched off by ${skill.disabledBy})` : "yes"],
    ["grants", skill.pinnedVersion > 0 ? `${skill.grantCount} (you are pinned to v${skill.pinnedVersion})` : String(skill.grantCount)],
    ["auto-created", skill.autoCreated ? "yes" : "no"],
    ["created", date(skill.createdAt)],
    ["updated", date(skill.updatedAt)],
    ["last invoked", date(skill.lastInvokedAt)],
  ];
  if (skill.warning) rows.push(["warning", skill.warning]);
  return rows.map(([key, value]) => `${`${key}:`.padEnd(14)}${value}\n`).join("");
}

export function warningLine(finding: GuardFinding): string {
  return `warning: [${finding.ruleId}] ${finding.category}, line ${finding.line}: ${finding.message}`;
}

/** A near-duplicate the service found (docs/learning.md#near-duplicates); resemblances below its thresholds are not printed. */
export function nearDuplicateLine(similar: SimilarSkill): string {
  const description = similar.descriptionSimilarity.toFixed(2);
  const code = similar.codeSimilarity.toFixed(2);
  return `warning: near-duplicate of ${similar.name} (description similarity ${description}, code similarity ${code}): consider patching ${similar.name} instead`;
}

/** The one-line cause of a failed run, falling back on the facts when the service gave none. */
export function failureCause(result: ExecutionResult | undefined): string {
  if (result === undefined) return "no result in the answer";
  if (result.errorSummary) return result.errorSummary;
  if (result.timedOut) return "timed out";
  if (result.oomKilled) return "killed: out of memory";
  return result.exitCode !== 0
    ? `exited ${result.exitCode}`
    : "exited 0 but printed nothing: print the result to stdout (docs/skill-lifecycle.md#the-skill-contract)";
}

/** The version history, one line each: `* v2  patch  2026-…  3f2a…  test payload {…}`. */
export function versionsTable(versions: readonly SkillVersion[]): string {
  return table(
    versions.map((v) => [
      `  ${v.active ? "*" : " "} v${v.version}`,
      v.origin,
      date(v.createdAt),
      v.contentHash.slice(0, 12),
      `test payload ${oneLine(v.testPayload, 40)}`,
    ]),
  );
}

function plural(count: number, one: string, many: string): string {
  return `${count} ${count === 1 ? one : many}`;
}

export function statsDetails(stats: GetSkillStatsResponse): string {
  const rate = stats.hasSuccessRate
    ? `${Math.round(stats.successRate * 100)}% (${stats.windowSuccesses}/${stats.windowSamples} in the rolling window)`
    : `- (${plural(stats.windowSamples, "sample", "samples")} in the rolling window; not enough to judge yet)`;
  const rows: [string, string][] = [
    ["name", stats.name],
    ["version", String(stats.version)],
    ["status", stats.skill ? statusName(stats.skill.status) : "-"],
    ["owner", stats.skill?.owner ?? "-"],
    ["visibility", stats.skill ? visibilityName(stats.skill.visibility) : "-"],
    ["age", `${stats.ageDays.toFixed(1)} days`],
    ["success rate", rate],
    ["velocity", `${stats.invocationVelocity7d.toFixed(1)} invocations/day (last 7 days)`],
    [
      "duration",
      stats.p95DurationMs > 0 ? `p50 ${stats.p50DurationMs} ms, p95 ${stats.p95DurationMs} ms` : "- (no runs of this version yet)",
    ],
    ["invocations", `${stats.totalInvocations} total, ${stats.totalSuccesses} successful`],
    ["auto-created", stats.autoCreated ? "yes" : "no"],
  ];
  return rows.map(([key, value]) => `${`${key}:`.padEnd(14)}${value}\n`).join("");
}
