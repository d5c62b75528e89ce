import { OnDuplicate, type SimilarSkill } from "../../gen/skillengine/v1/learning.js";
import { readFile } from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import { type ExecutionResult } from "../../gen/skillengine/v1/execution.js";
import { type GuardFinding } from "../../gen/skillengine/v1/registration.js";
import { Hardening, RouteMode, type RoutingGateReport, ToolFormat, toolFormatToJSON } from "../../gen/skillengine/v1/routing.js";
import { type Skill, skillStatusToJSON, Visibility } from "../../gen/skillengine/v1/skills.js";
import { jsonText, positiveInteger, UsageError, visibilityWord } from "./args.js";
import { everyPage } from "./pages.js";
import { isServiceError, type Rpc } from "./client.js";
import { printSteps } from "./composition-commands.js";
import { deliverFiles, type FileOutcome, fileJson, readInputFiles } from "./file-transfer.js";
import {
  failureCause,
  nearDuplicateLine,
  type Io,
  oneLine,
  progress,
  skillDetails,
  skillJson,
  skillLine,
  statsDetails,
  statusName,
  table,
  toJson,
  versionsTable,
  visibilityName,
  warningLine,
} from "./format.js";
import { errorMessage } from "../../errors/index.js";

export interface CommandContext {
  /** The command's name, for usage errors. */
  command: string;
  rpc: Rpc;
  io: Io;
  json: boolean;
  positionals: string[];
  options: Partial<Record<string, string | boolean | string[]>>;
}

/** Returns the process exit code; gRPC errors are thrown and mapped by the entry point. */
export type Command = (ctx: CommandContext) => Promise<number>;

const str = (ctx: CommandContext, key: string): string | undefined => {
  const value = ctx.options[key];
  return typeof value === "string" ? value : undefined;
};

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file}: ${errorMessage(error)}`);
  }
}

const arg = (ctx: CommandContext, index: number): string => ctx.positionals[index] ?? "";
/** A repeatable option's values, in the order given; none when absent. */
const repeated = (ctx: CommandContext, key: string): string[] => {
  const value = ctx.options[key];
  return Array.isArray(value) ? value : [];
};

export const register: Command = async (ctx) => {
  const file = arg(ctx, 0);
  const name = str(ctx, "name");
  const description = str(ctx, "description");
  if (!name) throw new UsageError("register needs --name", "register");
  if (!description) throw new UsageError("register needs --description", "register");
  const schemaFile = str(ctx, "schema");
  const schemaInline = str(ctx, "schema-json");
  if (schemaFile !== undefined && schemaInline !== undefined) throw new UsageError("give --schema or --schema-json, not both", "register");
  const code = await readText(file, "skill file");
  const parametersSchema =
    schemaInline !== undefined
      ? jsonText(schemaInline, "--schema-json")
      : schemaFile !== undefined
        ? jsonText(await readText(schemaFile, "schema file"), `schema file ${schemaFile}`)
        : '{"type":"object"}';
  const givenPayload = str(ctx, "test-payload");
  const testPayload = jsonText(givenPayload ?? "{}", "--test-payload");
  if (ctx.options.public === true && ctx.options.private === true) throw new UsageError("give --public or --private, not both", "register");
  const visibility =
    ctx.options.public === true
      ? Visibility.VISIBILITY_PUBLIC
      : ctx.options.private === true
        ? Visibility.VISIBILITY_PRIVATE
        : Visibility.VISIBILITY_UNSPECIFIED;
  const examples = ctx.options.example;
  const testFiles = await readInputFiles(repeated(ctx, "test-file"), "--test-file", "register");
  const line = progress(ctx.io, false);
  line.show(`registering ${name}: test run in a sandbox…`);
  const response = await ctx.rpc
    .call(ctx.rpc.raw.registerSkill, {
      name,
      description,
      parametersSchema,
      code,
      testPayload,
      exampleQueries: Array.isArray(examples) ? examples : [],
      visibility,
      onDuplicate: ctx.options["reject-duplicates"] === true ? OnDuplicate.ON_DUPLICATE_REJECT : OnDuplicate.ON_DUPLICATE_WARN,
      dependsOn: Array.isArray(ctx.options["depends-on"]) ? ctx.options["depends-on"] : [],
      system: ctx.options.system === true,
      requirements: repeated(ctx, "requirements"),
      systemPackages: repeated(ctx, "system-packages"),
      testFiles,
      secrets: repeated(ctx, "secrets"),
      networkAllow: repeated(ctx, "network-allow"),
      parametersSchemaJson: undefined,
      testPayloadJson: undefined,
    })
    .catch((error: unknown) => {
      throw withTestPayloadNamed(error, testPayload, givenPayload === undefined);
    })
    .finally(() => line.done());
  // The test run's output files (docs/files.md#test-files), written under --out like invoke's.
  const delivered = await deliverFiles(ctx, response.testFiles);
  newVersionOutput(ctx, "registered", response, delivered);
  return delivered.refused > 0 ? 2 : 0;
};

/**
 * A failed test run's cause is the skill's own error (`KeyError: 'text'`), which says nothing of
 * the payload it ran on: name it, and say when it was the default because none was given.
 */
function withTestPayloadNamed(error: unknown, payload: string, defaulted: boolean): unknown {
  if (!isServiceError(error) || error.code !== status.FAILED_PRECONDITION) return error;
  const which = defaulted ? `${payload}, the default: no --test-payload was given` : oneLine(payload, 200);
  error.details = `${(error.details || error.message).trim()} (the test run used the payload ${which})`;
  return error;
}

/** What register and patch print: the new version, its test run, normalizations and warnings. */
function newVersionOutput(
  ctx: CommandContext,
  verb: string,
  response: {
    skill: Skill | undefined;
    test: ExecutionResult | undefined;
    normalizations: string[];
    warnings: GuardFinding[];
    similarSkills?: SimilarSkill[];
    testFileWarnings?: string[];
    routingGate?: RoutingGateReport | undefined;
    unchanged?: boolean;
  },
  testFiles?: { outcomes: FileOutcome[]; lines: string },
): number {
  if (ctx.json) {
    ctx.io.out(
      toJson({ ...response, skill: skillJson(response.skill), ...(testFiles ? { testFiles: testFiles.outcomes.map(fileJson) } : {}) }),
    );
    return 0;
  }
  const test = response.test;
  const access = response.skill ? `, ${visibilityName(response.skill.visibility)}, owner ${response.skill.owner}` : "";
  // The active version as it is: nothing ran, no version was made (docs/skill-lifecycle.md#identical-registrations).
  if (response.unchanged) ctx.io.out(`unchanged: v${response.skill?.version ?? 0} already has this code\n`);
  else ctx.io.out(`${verb} ${skillLine(response.skill)}${access}${test ? `; test run passed in ${test.durationMs} ms` : ""}\n`);
  for (const normalization of response.normalizations) ctx.io.out(`normalized: ${normalization}\n`);
  for (const warning of response.warnings) ctx.io.out(`${warningLine(warning)}\n`);
  for (const similar of response.similarSkills ?? []) if (similar.nearDuplicate) ctx.io.out(`${nearDuplicateLine(similar)}\n`);
  if (response.routingGate) ctx.io.out(routingGateLines(response.routingGate));
  if (testFiles) ctx.io.out(testFiles.lines);
  for (const warning of response.testFileWarnings ?? []) ctx.io.out(`warning: test run: ${warning}\n`);
  return 0;
}

/** RegisterSkill's routing gate (docs/routing.md#the-routing-gate): the rank for each example query, then its warnings. */
function routingGateLines(report: RoutingGateReport): string {
  const lines = report.examples.map((e) => {
    const relevance = e.hasRelevance ? `, relevance ${e.relevance.toFixed(2)}` : "";
    const above = e.outrankedBy.length > 0 ? `, below ${e.outrankedBy.join(", ")}` : "";
    return `routing: example ${JSON.stringify(e.query)}: rank ${e.rank > 0 ? e.rank : "-"}${relevance}${above}${e.found ? "" : " (not found)"}\n`;
  });
  for (const degraded of report.degraded) lines.push(`routing: ${degraded}\n`);
  for (const warning of report.warnings) lines.push(`warning: routing: ${warning}\n`);
  return lines.join("");
}

export const invoke: Command = async (ctx) => {
  const name = arg(ctx, 0);
  const payload = jsonText(ctx.positionals[1] ?? "{}", "payload");
  const files = await readInputFiles(repeated(ctx, "file"), "--file", "invoke");
  const response = await ctx.rpc.call(ctx.rpc.raw.invokeSkill, { name, payload, payloadJson: undefined, routeId: "", files });
  const result = response.result;
  const success = result?.success === true;
  // Written whether or not the run succeeded: a failed run's files can say why (docs/operations.md#files-in-and-out).
  const delivered = await deliverFiles(ctx, response.files);
  const code = delivered.refused > 0 ? 2 : success ? 0 : 1;
  if (ctx.json) {
    const steps = response.steps.map((step) => ({ ...step, files: step.files.map((file) => fileJson({ file })) }));
    ctx.io.out(toJson({ ...response, files: delivered.outcomes.map(fileJson), steps }));
    return code;
  }
  const stdout = result?.stdout ?? "";
  printSteps(ctx, response.steps);
  for (const warning of response.warnings) ctx.io.err(`skillctl: warning: ${warning}\n`);
  if (stdout) ctx.io.out(stdout.endsWith("\n") ? stdout : `${stdout}\n`);
  if (!success) {
    const stderr = result?.stderr ?? "";
    if (stderr) ctx.io.err(stderr.endsWith("\n") ? stderr : `${stderr}\n`);
    ctx.io.err(`skillctl: ${name} v${response.version} failed: ${failureCause(result)}\n`);
  }
  // On stderr, like the steps and warnings: stdout stays the skill's own.
  ctx.io.err(delivered.lines);
  return code;
};

export const list: Command = async (ctx) => {
  const owner = str(ctx, "owner");
  if (owner === "") throw new UsageError("--owner needs an agent id", "list");
  const response = await everyPage(ctx, "skills", (page) =>
    ctx.rpc.call(ctx.rpc.raw.listSkills, { includeInactive: ctx.options.all === true, owner: owner ?? "", ...page }),
  );
  if (ctx.json) {
    ctx.io.out(toJson({ skills: response.skills.map(skillJson) }));
    return 0;
  }
  if (response.skills.length === 0) {
    ctx.io.out(owner === undefined ? "no skills\n" : `no skills of ${owner}\n`);
    return 0;
  }
  const rows = [["NAME", "VERSION", "STATUS", "OWNER", "VISIBILITY", "USES", "FAILS", "DESCRIPTION"]];
  for (const s of response.skills) {
    rows.push([
      s.name,
      String(s.version),
      statusName(s.status) + (s.protected ? "*" : ""),
      s.owner,
      visibilityName(s.visibility),
      String(s.usageCount),
      String(s.failureCount),
      oneLine(s.description),
    ]);
  }
  ctx.io.out(table(rows));
  if (response.skills.some((s) => s.protected)) ctx.io.out("(* protected: never deprecated or retired automatically)\n");
  return 0;
};

export const show: Command = async (ctx) => {
  const name = arg(ctx, 0);
  const got = await ctx.rpc.call(ctx.rpc.raw.getSkill, { name });
  const versions = await everyPage(ctx, "versions", (page) => ctx.rpc.call(ctx.rpc.raw.listSkillVersions, { name, ...page }));
  if (ctx.json) {
    ctx.io.out(toJson({ skill: skillJson(got.skill), code: got.code, versions: versions.versions }));
    return 0;
  }
  if (got.skill) ctx.io.out(skillDetails(got.skill));
  ctx.io.out("versions:\n");
  ctx.io.out(versionsTable(versions.versions));
  ctx.io.out(`\ncode:\n${got.code.endsWith("\n") ? got.code : `${got.code}\n`}`);
  return 0;
};

export const versions: Command = async (ctx) => {
  const response = await everyPage(ctx, "versions", (page) => ctx.rpc.call(ctx.rpc.raw.listSkillVersions, { name: arg(ctx, 0), ...page }));
  ctx.io.out(ctx.json ? toJson(response) : versionsTable(response.versions));
  return 0;
};

export const stats: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.getSkillStats, { name: arg(ctx, 0) });
  ctx.io.out(ctx.json ? toJson({ ...response, skill: skillJson(response.skill) }) : statsDetails(response));
  return 0;
};

/** Inline text or a file's exact content (one of the two, required). */
async function textOption(ctx: CommandContext, inline: string, file: string, allowEmpty: boolean): Promise<string> {
  const text = str(ctx, inline);
  const path = str(ctx, file);
  if (text !== undefined && path !== undefined) throw new UsageError(`give --${inline} or --${file}, not both`, ctx.command);
  if (text === undefined && path === undefined) throw new UsageError(`${ctx.command} needs --${inline} or --${file}`, ctx.command);
  const value = text ?? (await readText(path ?? "", `--${file}`));
  if (value === "" && !allowEmpty) throw new UsageError(`the --${text === undefined ? file : inline} text must not be empty`, ctx.command);
  return value;
}

export const patch: Command = async (ctx) => {
  const name = arg(ctx, 0);
  const find = await textOption(ctx, "find", "find-file", false);
  const replace = await textOption(ctx, "replace", "replace-file", true);
  const payloadText = str(ctx, "test-payload");
  const testPayload = payloadText === undefined ? "" : jsonText(payloadText, "--test-payload");
  const line = progress(ctx.io, false);
  line.show(`patching ${name}: test run in a sandbox…`);
  const response = await ctx.rpc.call(ctx.rpc.raw.patchSkill, { name, find, replace, testPayload }).finally(() => line.done());
  return newVersionOutput(ctx, "patched", response);
};

const FORMATS = new Map([
  ["openai", ToolFormat.TOOL_FORMAT_OPENAI],
  ["anthropic", ToolFormat.TOOL_FORMAT_ANTHROPIC],
]);
/** `--hardening`: how much each tool's description says about calling it (docs/routing.md#hardened-descriptions). */
const HARDENINGS = new Map([
  ["none", Hardening.HARDENING_NONE],
  ["short", Hardening.HARDENING_SHORT],
  ["full", Hardening.HARDENING_FULL],
]);

export const route: Command = async (ctx) => {
  const query = ctx.positionals.join(" ");
  const limitText = str(ctx, "limit");
  const limit = limitText === undefined ? 0 : positiveInteger(limitText, "--limit");
  const formatText = str(ctx, "format");
  const format = formatText === undefined ? ToolFormat.TOOL_FORMAT_OPENAI : FORMATS.get(formatText.toLowerCase());
  if (format === undefined) throw new UsageError(`--format must be openai or anthropic, got '${formatText}'`, "route");
  const hardeningText = str(ctx, "hardening");
  // Unset: the service's default (short).
  const hardening = hardeningText === undefined ? undefined : HARDENINGS.get(hardeningText.toLowerCase());
  if (hardeningText !== undefined && hardening === undefined) {
    throw new UsageError(`--hardening must be none, short or full, got '${hardeningText}'`, "route");
  }
  const minRelevanceText = str(ctx, "min-relevance");
  const minRelevance = minRelevanceText === undefined ? undefined : Number(minRelevanceText);
  if (minRelevance !== undefined && !(minRelevanceText?.trim() !== "" && minRelevance >= 0 && minRelevance <= 1)) {
    throw new UsageError(`--min-relevance must be a number from 0 to 1, got '${minRelevanceText}'`, "route");
  }
  const response = await ctx.rpc.call(ctx.rpc.raw.routeSkills, {
    query,
    limit,
    format,
    mode: RouteMode.ROUTE_MODE_FUSED,
    ...(minRelevance === undefined ? {} : { minRelevance }),
    ...(hardening === undefined ? {} : { hardening }),
  });
  if (ctx.json) {
    ctx.io.out(
      toJson({
        ...response,
        format: toolFormatToJSON(format),
        skills: response.skills.map((s) => ({ ...s, status: skillStatusToJSON(s.status) })),
      }),
    );
    return 0;
  }
  for (const degraded of response.degraded) ctx.io.err(`skillctl: routing degraded: ${degraded}\n`);
  for (const warning of response.warnings) ctx.io.err(`skillctl: ${warning}\n`);
  if (response.skills.length === 0) {
    // no_fit: candidates existed, none reached the floor (docs/routing.md#no-skill-fits).
    ctx.io.out(
      response.noFit
        ? "no skill fits (no skill reached the relevance floor; --min-relevance 0 lists the best candidates)\n"
        : "no skill matches\n",
    );
  } else {
    const rows = [["#", "NAME", "RELEVANCE", "SCORE", "STATUS", "SUCCESS", "WARNINGS"]];
    response.skills.forEach((s, i) =>
      rows.push([
        String(i + 1),
        s.name,
        s.hasRelevance ? s.relevance.toFixed(2) : "-",
        s.score.toFixed(4),
        statusName(s.status),
        s.hasSuccessRate ? `${Math.round(s.successRate * 100)}%` : "-",
        s.warnings.join("; "),
      ]),
    );
    ctx.io.out(table(rows));
  }
  ctx.io.out(`route id: ${response.routeId}\n`);
  if (formatText !== undefined) {
    // An instructions-only skill is not a tool (docs/routing.md#instructions-skills): it is listed apart.
    const tools = response.skills.filter((s) => s.toolDefinition !== "").map((s) => JSON.parse(s.toolDefinition) as unknown);
    ctx.io.out(`tools (${formatText.toLowerCase()}):\n${toJson(tools)}`);
    const instructions = response.skills.filter((s) => s.instructions !== "");
    if (instructions.length > 0)
      ctx.io.out(`instructions (not tools):\n${instructions.map((s) => `${s.name}: ${s.instructions}\n`).join("")}`);
  }
  return 0;
};

/** One skill by name (RetireSkill), else the sweep of the retirement rule (RetireDegradedSkills). */
export const retire: Command = async (ctx) => {
  if (ctx.positionals.length > 0) return retireOne(ctx);
  const dryRun = ctx.options["dry-run"] === true;
  const response = await ctx.rpc.call(ctx.rpc.raw.retireDegradedSkills, { dryRun, force: ctx.options.force === true });
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  for (const k of response.kept) ctx.io.out(`kept ${k.name}: ${k.reasons.join("; ")}\n`);
  if (response.retired.length === 0) {
    ctx.io.out(dryRun ? "nothing would be retired\n" : "nothing to retire\n");
    return 0;
  }
  for (const r of response.retired) ctx.io.out(`${dryRun ? "would retire" : "retired"} ${r.name}: ${r.reasons.join("; ")}\n`);
  return 0;
};

/** The commands answering `{skill}`: restore, rollback, delete. */
function skillAction(verb: string, call: (ctx: CommandContext) => Promise<{ skill: Skill | undefined }>): Command {
  return async (ctx) => {
    const response = await call(ctx);
    ctx.io.out(ctx.json ? toJson({ skill: skillJson(response.skill) }) : `${verb} ${skillLine(response.skill)}\n`);
    return 0;
  };
}

const retireOne = skillAction("retired", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.retireSkill, { name: arg(ctx, 0), force: ctx.options.force === true }),
);
export const restore = skillAction("restored", (ctx) => ctx.rpc.call(ctx.rpc.raw.restoreSkill, { name: arg(ctx, 0) }));
export const rollback = skillAction("rolled back:", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.rollbackSkill, { name: arg(ctx, 0), version: positiveInteger(arg(ctx, 1), "version") }),
);
export const remove = skillAction("deleted", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.deleteSkill, { name: arg(ctx, 0), force: ctx.options.force === true }),
);
export const protect = skillAction("protected", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.setSkillProtected, { name: arg(ctx, 0), protected: true }),
);
export const unprotect = skillAction("unprotected", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.setSkillProtected, { name: arg(ctx, 0), protected: false }),
);

export const visibility: Command = async (ctx) => {
  const word = visibilityWord(arg(ctx, 1));
  const response = await ctx.rpc.call(ctx.rpc.raw.setSkillVisibility, {
    name: arg(ctx, 0),
    visibility: word === "public" ? Visibility.VISIBILITY_PUBLIC : Visibility.VISIBILITY_PRIVATE,
  });
  const skill = response.skill;
  ctx.io.out(
    ctx.json ? toJson({ skill: skillJson(skill) }) : `${skillLine(skill)} is ${skill ? visibilityName(skill.visibility) : word}\n`,
  );
  return 0;
};

export const transfer: Command = async (ctx) => {
  const newOwner = arg(ctx, 1);
  if (newOwner.trim() === "") throw new UsageError("transfer needs the agent id of the new owner", "transfer");
  const response = await ctx.rpc.call(ctx.rpc.raw.transferSkill, { name: arg(ctx, 0), newOwner });
  const skill = response.skill;
  ctx.io.out(ctx.json ? toJson({ skill: skillJson(skill) }) : `transferred ${skillLine(skill)} to ${skill?.owner ?? newOwner}\n`);
  return 0;
};

export const whoami: Command = async (ctx) => {
  const me = await ctx.rpc.call(ctx.rpc.raw.whoAmI, {});
  if (ctx.json) {
    ctx.io.out(toJson(me));
    return 0;
  }
  const role = me.admin ? "admin" : "not an admin";
  ctx.io.out(
    me.authenticated
      ? `${me.agentId} (${role}; authenticated by token)\n`
      : `${me.agentId} (${role}; the service has no tokens configured: every caller is this agent)\n`,
  );
  return 0;
};

export const rebuild: Command = async (ctx) => {
  const line = progress(ctx.io, true);
  line.show("rebuilding indexes (reconciling the store, rewriting the mirror, re-indexing every skill)…");
  const response = await ctx.rpc.call(ctx.rpc.raw.rebuildIndexes, {}).finally(() => line.done());
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  ctx.io.out(
    `rebuilt: ${response.skillsIndexed} skill${response.skillsIndexed === 1 ? "" : "s"} indexed, ` +
      `${response.repairs.length} repair${response.repairs.length === 1 ? "" : "s"}, ${response.durationMs} ms\n`,
  );
  for (const repair of response.repairs) ctx.io.out(`repaired: ${repair}\n`);
  return 0;
};

export const wipeSandbox: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.wipeSandbox, {});
  ctx.io.out(
    ctx.json
      ? toJson(response)
      : `removed ${response.removedRunDirectories} run director${response.removedRunDirectories === 1 ? "y" : "ies"}\n`,
  );
  return 0;
};
