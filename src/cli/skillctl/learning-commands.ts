import { readFile } from "node:fs/promises";
import { errorMessage } from "../../errors/index.js";
import { type Candidate, CandidateStatus, candidateStatusToJSON, type ToolCall } from "../../gen/skillengine/v1/learning.js";
import { positiveInteger, UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { oneLine, table, toJson } from "./format.js";

const STATUSES: Record<string, CandidateStatus> = {
  candidate: CandidateStatus.CANDIDATE_STATUS_CANDIDATE,
  promoted: CandidateStatus.CANDIDATE_STATUS_PROMOTED,
  dismissed: CandidateStatus.CANDIDATE_STATUS_DISMISSED,
};

const statusName = (status: CandidateStatus): string => candidateStatusToJSON(status).replace("CANDIDATE_STATUS_", "").toLowerCase();

/**
 * `skillctl sessions record <file.json>`: a session as `{"session_key": "...", "tool_calls": [{"tool": "...",
 * "arguments": {...}}]}` (arguments as an object or as JSON text).
 */
export const sessions: Command = async (ctx) => {
  const [action, file] = ctx.positionals;
  if (action !== "record" || file === undefined) throw new UsageError("usage: sessions record <file.json>", "sessions");
  let document: unknown;
  try {
    document = JSON.parse(await readFile(file, "utf8")) as unknown;
  } catch (error) {
    throw new UsageError(`${file}: ${errorMessage(error)}`, "sessions");
  }
  const record = document as { session_key?: unknown; tool_calls?: unknown };
  if (typeof record.session_key !== "string" || !Array.isArray(record.tool_calls)) {
    throw new UsageError(`${file}: needs "session_key" (text) and "tool_calls" (a list)`, "sessions");
  }
  const toolCalls: ToolCall[] = record.tool_calls.map((raw: unknown, index) => {
    const call = raw as { tool?: unknown; arguments?: unknown };
    if (typeof call.tool !== "string") throw new UsageError(`${file}: tool_calls[${index}].tool must be text`, "sessions");
    const args = call.arguments === undefined ? "" : typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
    return { tool: call.tool, arguments: args };
  });
  const response = await ctx.rpc.call(ctx.rpc.raw.recordSession, { sessionKey: record.session_key, toolCalls });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, candidates: response.candidates.map(candidateJson) }));
    return 0;
  }
  ctx.io.out(
    `recorded ${response.toolCalls} tool call(s)${response.alreadyRecorded ? " (session seen before: counted once)" : ""}` +
      `${response.implicitFailures > 0 ? `, ${response.implicitFailures} implicit failure signal(s)` : ""}\n`,
  );
  printCandidates(ctx, response.candidates);
  for (const name of response.promotedSkills) ctx.io.out(`auto-promoted: ${name}\n`);
  return 0;
};

/** `skillctl candidates [--status candidate|promoted|dismissed]`. */
export const candidates: Command = async (ctx) => {
  const wanted = ctx.options.status;
  let status = CandidateStatus.CANDIDATE_STATUS_UNSPECIFIED;
  if (typeof wanted === "string") {
    const found = STATUSES[wanted];
    if (found === undefined) throw new UsageError("--status must be candidate, promoted or dismissed", "candidates");
    status = found;
  }
  const response = await everyPage(ctx, "candidates", (page) => ctx.rpc.call(ctx.rpc.raw.listCandidates, { status, ...page }));
  if (ctx.json) {
    ctx.io.out(toJson(response.candidates.map(candidateJson)));
    return 0;
  }
  if (response.candidates.length === 0) ctx.io.err("skillctl: no candidates\n");
  printCandidates(ctx, response.candidates);
  return 0;
};

/** `skillctl promote <id> [--name N] [--description D]`. */
export const promote: Command = async (ctx) => {
  const id = positiveInteger(ctx.positionals[0] ?? "", "candidate id");
  const name = typeof ctx.options.name === "string" ? ctx.options.name : "";
  const description = typeof ctx.options.description === "string" ? ctx.options.description : "";
  const response = await ctx.rpc.call(ctx.rpc.raw.promoteCandidate, { id, name, description });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, candidate: response.candidate ? candidateJson(response.candidate) : undefined }));
    return 0;
  }
  const skill = response.skill;
  if (response.evolution) {
    const e = response.evolution;
    ctx.io.out(`evolved ${e.skillName}: v${e.fromVersion} → v${e.toVersion} (overlap ${Math.round(e.overlap * 100)}%)\n`);
  } else {
    ctx.io.out(`promoted candidate ${id} to ${skill?.name ?? "?"} v${skill?.version ?? 0} (auto-created composed skill)\n`);
  }
  return 0;
};

/** `skillctl dismiss <id>`. */
export const dismiss: Command = async (ctx) => {
  const id = positiveInteger(ctx.positionals[0] ?? "", "candidate id");
  const response = await ctx.rpc.call(ctx.rpc.raw.dismissCandidate, { id });
  if (ctx.json) ctx.io.out(toJson(response.candidate ? candidateJson(response.candidate) : null));
  else ctx.io.out(`dismissed candidate ${id}\n`);
  return 0;
};

/** `skillctl outcome <name> <invocation-id> ok|fail [--note TEXT]`. */
export const outcome: Command = async (ctx) => {
  const [name = "", invocationId = "", verdict = ""] = ctx.positionals;
  if (verdict !== "ok" && verdict !== "fail") throw new UsageError("the verdict must be ok or fail", "outcome");
  const note = typeof ctx.options.note === "string" ? ctx.options.note : "";
  const response = await ctx.rpc.call(ctx.rpc.raw.recordSkillOutcome, { name, invocationId, success: verdict === "ok", note });
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  ctx.io.out(
    `recorded ${verdict} for ${name} invocation ${invocationId}` +
      `${response.overridden ? ` (overrides the exit code's ${response.exitCodeSuccess ? "success" : "failure"})` : ""}\n`,
  );
  return 0;
};

function printCandidates(ctx: CommandContext, list: readonly Candidate[]): void {
  if (list.length === 0) return;
  const rows = [["ID", "STATUS", "SESSIONS", "SKILL", "SEQUENCE"]];
  for (const c of list) {
    rows.push([
      String(c.id),
      statusName(c.status),
      String(c.occurrences),
      c.skillName || "-",
      oneLine(c.toolSequence.map((s) => s.tool).join(" → "), 70),
    ]);
  }
  ctx.io.out(table(rows));
}

function candidateJson(c: Candidate): Record<string, unknown> {
  return { ...c, status: statusName(c.status) };
}
