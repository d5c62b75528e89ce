import { readFile } from "node:fs/promises";
import { parse as parseYaml } from "yaml";
import {
  catalogStatusToJSON,
  type ComposedStep,
  OnFailure,
  type RegisterComposedSkillRequest,
} from "../../gen/skillengine/v1/composition.js";
import { type StepResult } from "../../gen/skillengine/v1/execution.js";
import { Visibility } from "../../gen/skillengine/v1/skills.js";
import { errorMessage } from "../../errors/index.js";
import { UsageError } from "./args.js";
import { everyPage } from "./pages.js";
import type { Command, CommandContext } from "./commands.js";
import { failureCause, progress, skillJson, skillLine, table, toJson } from "./format.js";

/**
 * `skillctl compose <file>`: a composed skill from a JSON or YAML file (YAML is a superset of
 * JSON, so one parser reads both). Templates and schemas may be written as objects.
 */
export const compose: Command = async (ctx) => {
  const file = ctx.positionals[0] ?? "";
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read composition file ${file}: ${errorMessage(error)}`);
  }
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new UsageError(`${file} is neither JSON nor YAML: ${errorMessage(error)}`);
  }
  const request = composeRequest(document, file);
  const line = progress(ctx.io, false);
  line.show(`registering ${request.name}: the whole composition runs in sandboxes…`);
  const response = await ctx.rpc.call(ctx.rpc.raw.registerComposedSkill, request).finally(() => line.done());
  if (ctx.json) {
    ctx.io.out(toJson({ ...response, skill: skillJson(response.skill) }));
    return 0;
  }
  if (response.unchanged) {
    // The active version as it is: nothing ran (docs/skill-lifecycle.md#identical-registrations).
    ctx.io.out(`unchanged: v${response.skill?.version ?? 0} already has this definition\n`);
    return 0;
  }
  ctx.io.out(
    `registered ${skillLine(response.skill)} (composed, ${request.steps.length} steps); test run passed in ${response.test?.durationMs ?? 0} ms\n`,
  );
  ctx.io.out(stepLines(response.steps));
  for (const name of response.evicted) ctx.io.out(`evicted ${name} (the least used of your composed skills; restore brings it back)\n`);
  return 0;
};

/** The request a composition file describes; UsageError naming the first field that is wrong. */
export function composeRequest(document: unknown, file: string): RegisterComposedSkillRequest {
  if (!isObject(document)) throw new UsageError(`${file}: expected an object with name, description, steps …`);
  const text = (key: string, required: boolean): string => {
    const value = document[key];
    if (value === undefined || value === null) {
      if (required) throw new UsageError(`${file}: "${key}" is required`);
      return "";
    }
    if (typeof value !== "string") throw new UsageError(`${file}: "${key}" must be text`);
    return value;
  };
  /** A template is the value itself (a string is a template string); never JSON text. */
  const template = (value: unknown, fallback: string): string => (value === undefined || value === null ? fallback : JSON.stringify(value));
  /** A JSON value written as an object, or JSON text. */
  const json = (value: unknown, fallback: string): string =>
    value === undefined || value === null ? fallback : typeof value === "string" ? value : JSON.stringify(value);
  const steps = document.steps;
  if (!Array.isArray(steps) || steps.length === 0) throw new UsageError(`${file}: "steps" must be a non-empty list`);
  const visibility = text("visibility", false).toLowerCase();
  if (visibility !== "" && visibility !== "public" && visibility !== "private")
    throw new UsageError(`${file}: "visibility" must be public or private`);
  const examples = document.example_queries ?? [];
  if (!Array.isArray(examples) || examples.some((e) => typeof e !== "string"))
    throw new UsageError(`${file}: "example_queries" must be a list of text`);
  return {
    onDuplicate: 0,
    name: text("name", true),
    description: text("description", true),
    parametersSchema: json(document.parameters_schema, '{"type":"object"}'),
    steps: steps.map((raw: unknown, index): ComposedStep => {
      if (!isObject(raw)) throw new UsageError(`${file}: steps[${index}] must be an object`);
      const onFailure = raw.on_failure ?? "stop";
      if (onFailure !== "stop" && onFailure !== "continue")
        throw new UsageError(`${file}: steps[${index}].on_failure must be stop or continue`);
      if (typeof raw.id !== "string" || typeof raw.skill !== "string") throw new UsageError(`${file}: steps[${index}] needs id and skill`);
      if (raw.when !== undefined && typeof raw.when !== "string") throw new UsageError(`${file}: steps[${index}].when must be text`);
      return {
        id: raw.id,
        skill: raw.skill,
        args: template(raw.args, "{}"),
        when: typeof raw.when === "string" ? raw.when : "",
        onFailure: onFailure === "continue" ? OnFailure.ON_FAILURE_CONTINUE : OnFailure.ON_FAILURE_STOP,
      };
    }),
    output: template(document.output, ""),
    testPayload: json(document.test_payload, "{}"),
    visibility:
      visibility === "public"
        ? Visibility.VISIBILITY_PUBLIC
        : visibility === "private"
          ? Visibility.VISIBILITY_PRIVATE
          : Visibility.VISIBILITY_UNSPECIFIED,
    exampleQueries: examples as string[],
  };
}

/** `skillctl deps <name>`. */
export const deps: Command = async (ctx) => {
  const response = await ctx.rpc.call(ctx.rpc.raw.getSkillDependencies, { name: ctx.positionals[0] ?? "" });
  if (ctx.json) {
    ctx.io.out(toJson(response));
    return 0;
  }
  ctx.io.out(`depends on: ${response.dependsOn.join(", ") || "nothing"}\n`);
  ctx.io.out(`dependents: ${response.dependents.join(", ") || "none"}\n`);
  ctx.io.out(`load order: ${response.loadOrder.join(" → ")}\n`);
  for (const warning of response.warnings) ctx.io.out(`warning: ${warning}\n`);
  return 0;
};

/** `skillctl catalog`: every visible skill with its dependency status. */
export const catalog: Command = async (ctx) => {
  const response = await everyPage(ctx, "skills", (page) => ctx.rpc.call(ctx.rpc.raw.getCatalog, page));
  if (ctx.json) {
    ctx.io.out(toJson({ skills: response.skills.map((s) => ({ ...s, status: catalogStatusToJSON(s.status) })) }));
    return 0;
  }
  const rows = [["NAME", "KIND", "VERSION", "STATUS", "DEPENDS ON", "DETAIL"]];
  for (const s of response.skills) {
    const status = catalogStatusToJSON(s.status)
      .replace(/^CATALOG_STATUS_/, "")
      .toLowerCase();
    const detail = s.blockedBy.length > 0 ? `blocked by ${s.blockedBy.join(", ")}` : s.error || s.reason || s.warnings.join("; ");
    rows.push([s.name, s.kind, String(s.version), status, s.dependsOn.join(", ") || "-", detail]);
  }
  ctx.io.out(table(rows));
  return 0;
};

/** One line per step of a composed run: id, skill@version, and what became of it. */
export function stepLines(steps: readonly StepResult[]): string {
  return steps
    .map((s) => {
      const what = s.skipped
        ? "skipped (condition false)"
        : s.error !== ""
          ? `error: ${s.error}`
          : s.result?.success
            ? `ok in ${s.result.durationMs} ms`
            : `failed: ${failureCause(s.result)}`;
      return `  step ${s.id}: ${s.skill}${s.version > 0 ? ` v${s.version}` : ""} ${what}\n`;
    })
    .join("");
}

/** Prints a composed invocation's steps on stderr (stdout stays the result). */
export function printSteps(ctx: CommandContext, steps: readonly StepResult[]): void {
  if (steps.length > 0) ctx.io.err(stepLines(steps));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
