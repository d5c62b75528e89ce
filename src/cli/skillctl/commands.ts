import { readFile } from "node:fs/promises";
import {
  RouteMode,
  type Skill,
  skillStatusToJSON,
  ToolFormat,
  toolFormatToJSON,
} from "../../gen/skillengine/v1/skill_engine.js";
import { jsonText, positiveInteger, UsageError } from "./args.js";
import type { Rpc } from "./client.js";
import { failureCause, type Io, oneLine, skillDetails, skillJson, skillLine, statusName, table, toJson, warningLine } from "./format.js";

export interface CommandContext {
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
    throw new UsageError(`cannot read ${what} ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const arg = (ctx: CommandContext, index: number): string => ctx.positionals[index] ?? "";

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
  const testPayload = jsonText(str(ctx, "test-payload") ?? "{}", "--test-payload");
  const examples = ctx.options.example;
  const response = await ctx.rpc.call(ctx.rpc.raw.registerSkill, {
    name,
    description,
    parametersSchema,
    code,
    testPayload,
    exampleQueries: Array.isArray(examples) ? examples : [],
    visibility: 0,
  });
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, skill: skillJson(response.skill) }));
    return 0;
  }
  const test = response.test;
  ctx.io.out(`registered ${skillLine(response.skill)}${test ? `; test run passed in ${test.durationMs} ms` : ""}\n`);
  for (const normalization of response.normalizations) ctx.io.out(`normalized: ${normalization}\n`);
  for (const warning of response.warnings) ctx.io.out(`${warningLine(warning)}\n`);
  return 0;
};

export const invoke: Command = async (ctx) => {
  const name = arg(ctx, 0);
  const payload = jsonText(ctx.positionals[1] ?? "{}", "payload");
  const response = await ctx.rpc.call(ctx.rpc.raw.invokeSkill, { name, payload, routeId: "" });
  const result = response.result;
  const success = result?.success === true;
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return success ? 0 : 1;
  }
  const stdout = result?.stdout ?? "";
  if (stdout) ctx.io.out(stdout.endsWith("\n") ? stdout : `${stdout}\n`);
  if (!success) {
    const stderr = result?.stderr ?? "";
    if (stderr) ctx.io.err(stderr.endsWith("\n") ? stderr : `${stderr}\n`);
    ctx.io.err(`skillctl: ${name} v${response.version} failed: ${failureCause(result)}\n`);
  }
  return success ? 0 : 1;
};

export const list: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.listSkills, { includeInactive: ctx.options.all === true, owner: "" });
  if (ctx.json) {
    ctx.io.out(toJson({ skills: response.skills.map(skillJson) }));
    return 0;
  }
  if (response.skills.length === 0) {
    ctx.io.out("no skills\n");
    return 0;
  }
  const rows = [["NAME", "VERSION", "STATUS", "USES", "FAILS", "DESCRIPTION"]];
  for (const s of response.skills) {
    rows.push([s.name, String(s.version), statusName(s.status) + (s.protected ? "*" : ""), String(s.usageCount), String(s.failureCount), oneLine(s.description)]);
  }
  ctx.io.out(table(rows));
  return 0;
};

export const show: Command = async (ctx) => {
  const name = arg(ctx, 0);
  const got = await ctx.rpc.call(ctx.rpc.raw.getSkill, { name });
  const versions = await ctx.rpc.call(ctx.rpc.raw.listSkillVersions, { name });
  if (ctx.json) {
    ctx.io.out(toJson({ skill: skillJson(got.skill), code: got.code, versions: versions.versions }));
    return 0;
  }
  if (got.skill) ctx.io.out(skillDetails(got.skill));
  ctx.io.out("versions:\n");
  const rows = versions.versions.map((v) => [
    `  ${v.active ? "*" : " "} v${v.version}`,
    v.origin,
    v.createdAt?.toISOString() ?? "-",
    v.contentHash.slice(0, 12),
    `test payload ${oneLine(v.testPayload, 40)}`,
  ]);
  ctx.io.out(table(rows));
  ctx.io.out(`\ncode:\n${got.code.endsWith("\n") ? got.code : `${got.code}\n`}`);
  return 0;
};

const FORMATS: Record<string, ToolFormat> = { openai: ToolFormat.TOOL_FORMAT_OPENAI, anthropic: ToolFormat.TOOL_FORMAT_ANTHROPIC };

export const route: Command = async (ctx) => {
  const query = ctx.positionals.join(" ");
  const limitText = str(ctx, "limit");
  const limit = limitText === undefined ? 0 : positiveInteger(limitText, "--limit");
  const formatText = str(ctx, "format");
  const format = formatText === undefined ? ToolFormat.TOOL_FORMAT_OPENAI : FORMATS[formatText.toLowerCase()];
  if (format === undefined) throw new UsageError(`--format must be openai or anthropic, got '${formatText}'`, "route");
  const response = await ctx.rpc.call(ctx.rpc.raw.routeSkills, {
    query,
    limit,
    format,
    mode: RouteMode.ROUTE_MODE_FUSED,
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
  if (response.skills.length === 0) {
    ctx.io.out("no skill matches\n");
  } else {
    const rows = [["#", "NAME", "SCORE", "STATUS", "SUCCESS", "WARNINGS"]];
    response.skills.forEach((s, i) =>
      rows.push([
        String(i + 1),
        s.name,
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
    const tools = response.skills.map((s) => JSON.parse(s.toolDefinition) as unknown);
    ctx.io.out(`tools (${formatText.toLowerCase()}):\n${toJson(tools)}`);
  }
  return 0;
};

export const retire: Command = async (ctx) => {
  const dryRun = ctx.options["dry-run"] === true;
  const response = await ctx.rpc.call(ctx.rpc.raw.retireDegradedSkills, { dryRun });
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
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

export const restore = skillAction("restored", (ctx) => ctx.rpc.call(ctx.rpc.raw.restoreSkill, { name: arg(ctx, 0) }));
export const rollback = skillAction("rolled back:", (ctx) =>
  ctx.rpc.call(ctx.rpc.raw.rollbackSkill, { name: arg(ctx, 0), version: positiveInteger(arg(ctx, 1), "version") }),
);
export const remove = skillAction("deleted", (ctx) => ctx.rpc.call(ctx.rpc.raw.deleteSkill, { name: arg(ctx, 0) }));

export const wipeSandbox: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.wipeSandbox, {});
  ctx.io.out(ctx.json ? toJson(response) : `removed ${response.removedRunDirectories} run director${response.removedRunDirectories === 1 ? "y" : "ies"}\n`);
  return 0;
};
