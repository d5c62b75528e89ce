import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import { InvokeSkillRequest, type InvokeSkillResponse } from "../gen/skillengine/v1/execution.js";
import { RecordSkillOutcomeRequest } from "../gen/skillengine/v1/learning.js";
import { AddLessonRequest, GetPlaybookContextRequest } from "../gen/skillengine/v1/playbook.js";
import { PatchSkillRequest, RegisterSkillRequest } from "../gen/skillengine/v1/registration.js";
import { RecordRouteFeedbackRequest, RouteSkillsRequest } from "../gen/skillengine/v1/routing.js";
import { GetSkillRequest } from "../gen/skillengine/v1/skills.js";
import { allSkills, type CallScope, type EngineClient } from "./engine-client.js";
import {
  jsonText,
  lessonSummary,
  schemaObject,
  skillSummary,
  statusName,
  structured,
  testRun,
  toolError,
  toolResultOfRpcError,
  visibilityOf,
} from "./tool-results.js";
import * as schemas from "./tool-schemas.js";

/** What a tool call runs with: the API, the caller's credentials and cancellation, and the session's memory. */
export interface ToolContext {
  readonly engine: EngineClient;
  readonly scope: CallScope;
  /** The skill each invocation of this session ran, so record_outcome needs only the invocation_id. */
  readonly invocations: InvocationMemory;
}

/** A meta tool: its definition and what it does (docs/mcp.md#tools). */
export interface MetaTool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodType;
  readonly output?: z.ZodType;
  readonly annotations: ToolAnnotations;
  run(args: never, context: ToolContext): Promise<CallToolResult>;
}

const INVOCATION_META = "skill-engine/invocation_id";
/** How many invocations a session remembers for record_outcome; older ones need `name`. */
const REMEMBERED_INVOCATIONS = 1_000;

/** Invocation ids of one session → the skill that ran, the oldest forgotten first. */
export class InvocationMemory {
  private readonly names = new Map<string, string>();

  remember(invocationId: string, name: string): void {
    if (invocationId === "") return;
    this.names.set(invocationId, name);
    if (this.names.size > REMEMBERED_INVOCATIONS) this.names.delete(this.names.keys().next().value as string);
  }

  nameOf(invocationId: string): string | undefined {
    return this.names.get(invocationId);
  }
}

const lookup: ToolAnnotations = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
const change: ToolAnnotations = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false };

function tool<I extends z.ZodType>(
  definition: Omit<MetaTool, "run" | "input"> & { input: I },
  run: (args: z.infer<I>, context: ToolContext) => Promise<CallToolResult>,
): MetaTool {
  return { ...definition, run: run as MetaTool["run"] };
}

/** Calls the API; a gRPC error becomes the tool result docs/mcp.md#errors describes. */
async function rpc(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    return toolResultOfRpcError(error);
  }
}

/**
 * A run as a tool result: stdout as text (and as structured content when it is a JSON object); a skill
 * that failed is `isError` with its one-line cause, never a protocol error. The invocation_id is in the
 * text (for the model) and in `_meta` (for programs).
 */
export function runResult(name: string, response: InvokeSkillResponse, memory: InvocationMemory): CallToolResult {
  const result = response.result;
  memory.remember(response.invocationId, name);
  const notes = [
    ...response.warnings,
    ...response.files.map((f) => `returned file: ${f.path} (${f.sizeBytes} bytes${f.truncated ? ", truncated" : ""})`),
    ...(response.invocationId === ""
      ? []
      : [`invocation_id: ${response.invocationId} (report whether the result helped with record_outcome)`]),
  ];
  const meta = {
    [INVOCATION_META]: response.invocationId,
    "skill-engine/name": name,
    "skill-engine/version": response.version,
    "skill-engine/exit_code": result?.exitCode ?? 0,
    "skill-engine/duration_ms": result?.durationMs ?? 0,
  };
  const text = (t: string): { type: "text"; text: string } => ({ type: "text", text: t });
  if (!result?.success) {
    const cause =
      result?.errorSummary || (result?.exitCode === 0 ? "the skill printed nothing on stdout" : `exit code ${result?.exitCode}`);
    return { content: [cause, ...notes].map(text), isError: true, _meta: meta };
  }
  const parsed = jsonObject(result.stdout);
  return {
    content: [result.stdout, ...notes].map(text),
    ...(parsed === undefined ? {} : { structuredContent: parsed }),
    _meta: meta,
  };
}

function jsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a skill by name: run_skill and, in `skills` mode, each skill's own tool. */
export async function invokeSkill(name: string, args: Record<string, unknown> | undefined, routeId: string, context: ToolContext) {
  const request = InvokeSkillRequest.fromPartial({ name, payload: JSON.stringify(args ?? {}), routeId });
  return context.engine.call(context.engine.skills.invokeSkill, request, context.scope);
}

/** Skills the caller can see that resemble a registration that failed (routing's view of its description). */
async function similarTo(description: string, context: ToolContext): Promise<string[]> {
  try {
    const route = await context.engine.call(
      context.engine.skills.routeSkills,
      RouteSkillsRequest.fromPartial({ query: description.slice(0, 2_000), limit: 3 }),
      context.scope,
    );
    return route.skills.map((s) => s.name);
  } catch {
    return []; // a hint only: the registration's own answer stands
  }
}

export const META_TOOLS: readonly MetaTool[] = [
  tool(
    {
      name: "find_skills",
      title: "Find skills",
      description:
        "Finds the skills of the library that fit a request, best first, with how likely each fits (relevance 0..1), its input schema " +
        "and a route_id. Run one with run_skill (pass the route_id), and report with route_feedback or record_outcome. An empty list " +
        "with no_fit means nothing in the library fits: do the task another way, or register a skill for it.",
      input: schemas.findSkillsArguments,
      output: schemas.findSkillsResult,
      annotations: lookup,
    },
    (args, context) =>
      rpc(async () => {
        const response = await context.engine.call(
          context.engine.skills.routeSkills,
          RouteSkillsRequest.fromPartial({ query: args.query, limit: args.limit ?? 0, minRelevance: args.min_relevance }),
          context.scope,
        );
        return structured({
          route_id: response.routeId,
          skills: response.skills.map((s) => ({
            name: s.name,
            description: s.description,
            relevance: s.hasRelevance ? s.relevance : null,
            status: statusName(s.status),
            kind: s.kind,
            skill_id: s.skillId,
            input_schema: schemaObject(s.parametersSchema),
            instructions: s.instructions,
            warnings: s.warnings,
          })),
          no_fit: response.noFit,
          degraded: response.degraded,
          warnings: response.warnings,
        });
      }),
  ),
  tool(
    {
      name: "run_skill",
      title: "Run a skill",
      description:
        "Runs a skill in a fresh sandbox with the given arguments. The result is the skill's output (structured when it prints a JSON " +
        "object); a skill that fails gives an error result with the one-line cause. The result names an invocation_id for record_outcome.",
      input: schemas.runSkillArguments,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args, context) =>
      rpc(async () =>
        runResult(args.name, await invokeSkill(args.name, args.arguments, args.route_id ?? "", context), context.invocations),
      ),
  ),
  tool(
    {
      name: "get_skill",
      title: "Show a skill",
      description: "A skill's description, input schema, status, declarations and active code.",
      input: schemas.getSkillArguments,
      output: schemas.getSkillResult,
      annotations: lookup,
    },
    (args, context) =>
      rpc(async () => {
        const r = await context.engine.call(
          context.engine.skills.getSkill,
          GetSkillRequest.fromPartial({ name: args.name }),
          context.scope,
        );
        return structured({
          skill: skillSummary(r.skill),
          kind: r.kind,
          skill_id: r.skillId,
          code: r.code,
          depends_on: r.dependsOn,
          requirements: r.skill?.requirements ?? [],
          system_packages: r.skill?.systemPackages ?? [],
          secrets: r.skill?.secrets ?? [],
          network_allow: r.skill?.networkAllow ?? [],
        });
      }),
  ),
  tool(
    {
      name: "list_skills",
      title: "List skills",
      description: "Every skill you may see: yours, public ones, system skills and skills granted to you.",
      input: schemas.listSkillsArguments,
      output: schemas.listSkillsResult,
      annotations: lookup,
    },
    (args, context) =>
      rpc(async () => {
        const skills = await allSkills(context.engine, context.scope, {
          owner: args.owner ?? "",
          includeInactive: args.include_inactive ?? false,
        });
        return structured({ skills: skills.map(skillSummary) });
      }),
  ),
  tool(
    {
      name: "register_skill",
      title: "Register a skill",
      description:
        "Adds a Python skill to the library, or a new version of one of yours. The service normalizes and checks the code, then runs it " +
        "once with test_payload in a sandbox: only a run that exits 0 and prints something is accepted. A refusal is an error result " +
        "with the exact cause (fix it and register again). See the create_skill prompt for the rules.",
      input: schemas.registerSkillArguments,
      output: schemas.registerSkillResult,
      annotations: change,
    },
    async (args, context) => {
      const request = RegisterSkillRequest.fromPartial({
        name: args.name,
        description: args.description,
        parametersSchema: jsonText(args.parameters_schema, "{}"),
        code: args.code,
        testPayload: jsonText(args.test_payload, "{}"),
        exampleQueries: args.example_queries ?? [],
        requirements: args.requirements ?? [],
        systemPackages: args.system_packages ?? [],
        secrets: args.secrets ?? [],
        networkAllow: args.network_allow ?? [],
        visibility: visibilityOf(args.visibility),
        dependsOn: args.depends_on ?? [],
      });
      try {
        const r = await context.engine.call(context.engine.skills.registerSkill, request, context.scope);
        return structured({
          skill: skillSummary(r.skill),
          test: r.unchanged ? null : testRun(r.test),
          unchanged: r.unchanged,
          routing_warnings: r.routingGate?.warnings ?? [],
          normalizations: r.normalizations,
          warnings: r.warnings.map((w) => `${w.ruleId} (line ${w.line}): ${w.message}`),
          similar_skills: r.similarSkills.map((s) => ({
            name: s.name,
            description_similarity: s.descriptionSimilarity,
            near_duplicate: s.nearDuplicate,
          })),
        });
      } catch (error) {
        const refused = toolResultOfRpcError(error);
        const similar = (await similarTo(args.description, context)).filter((name) => name !== args.name);
        if (similar.length === 0) return refused;
        const line = `similar skills you can use or patch instead: ${similar.join(", ")}`;
        return { ...refused, content: [...refused.content, { type: "text", text: line }] };
      }
    },
  ),
  tool(
    {
      name: "patch_skill",
      title: "Patch a skill",
      description:
        "Replaces one exact piece of a skill's active code and tests the result like a registration; the active version stays " +
        "unless the test passes.",
      input: schemas.patchSkillArguments,
      output: schemas.patchSkillResult,
      annotations: change,
    },
    (args, context) =>
      rpc(async () => {
        const request = PatchSkillRequest.fromPartial({
          name: args.name,
          find: args.find,
          replace: args.replace,
          testPayload: jsonText(args.test_payload, ""),
        });
        const r = await context.engine.call(context.engine.skills.patchSkill, request, context.scope);
        return structured({
          skill: skillSummary(r.skill),
          test: testRun(r.test),
          normalizations: r.normalizations,
          warnings: r.warnings.map((w) => `${w.ruleId} (line ${w.line}): ${w.message}`),
        });
      }),
  ),
  tool(
    {
      name: "record_outcome",
      title: "Report an outcome",
      description:
        "Says whether a run (by its invocation_id) achieved its goal. It counts in the skill's health: a skill that keeps failing " +
        "is retired. An exit 0 that did not help is a failure.",
      input: schemas.recordOutcomeArguments,
      output: schemas.recordOutcomeResult,
      annotations: change,
    },
    (args, context) =>
      rpc(async () => {
        const name = args.name ?? context.invocations.nameOf(args.invocation_id);
        if (name === undefined) {
          return toolError(`invocation ${args.invocation_id} was not run in this session: give the skill's name too`, "INVALID_ARGUMENT");
        }
        const request = RecordSkillOutcomeRequest.fromPartial({
          name,
          invocationId: args.invocation_id,
          success: args.success,
          note: args.note ?? "",
        });
        const r = await context.engine.call(context.engine.skills.recordSkillOutcome, request, context.scope);
        return structured({ exit_code_success: r.exitCodeSuccess, overridden: r.overridden, skill: skillSummary(r.skill) });
      }),
  ),
  tool(
    {
      name: "route_feedback",
      title: "Rate a route",
      description: "Says whether a skill find_skills proposed (by route_id) was the right one, so routing learns.",
      input: schemas.routeFeedbackArguments,
      output: schemas.routeFeedbackResult,
      annotations: change,
    },
    (args, context) =>
      rpc(async () => {
        const request = RecordRouteFeedbackRequest.fromPartial({
          routeId: args.route_id,
          name: args.name,
          success: args.success,
          fallback: args.fallback,
        });
        const r = await context.engine.call(context.engine.skills.recordRouteFeedback, request, context.scope);
        return structured({ credited: r.credited });
      }),
  ),
  tool(
    {
      name: "get_lessons",
      title: "Get lessons",
      description: "Lessons learned on earlier tasks like this one (the playbook), as a context block to read before starting.",
      input: schemas.getLessonsArguments,
      output: schemas.getLessonsResult,
      annotations: lookup,
    },
    (args, context) =>
      rpc(async () => {
        const request = GetPlaybookContextRequest.fromPartial({ query: args.query, limit: args.limit ?? 0 });
        const r = await context.engine.callPlaybook(context.engine.playbook.getPlaybookContext, request, context.scope);
        return structured({ context: r.context, lessons: r.lessons.map(lessonSummary), retrieval_id: r.retrievalId, warnings: r.warnings });
      }),
  ),
  tool(
    {
      name: "add_lesson",
      title: "Add a lesson",
      description:
        "Keeps a lesson for later tasks: when it applies (trigger), what to do, and what to avoid. Lessons that merely restate one " +
        "task are refused; a lesson like an existing one is merged into it.",
      input: schemas.addLessonArguments,
      output: schemas.addLessonResult,
      annotations: change,
    },
    (args, context) =>
      rpc(async () => {
        const request = AddLessonRequest.fromPartial({
          trigger: args.trigger,
          correctPattern: args.correct_pattern,
          antiPattern: args.anti_pattern ?? "",
          domains: args.domains ?? [],
          confidence: args.confidence ?? 0,
          source: args.source ?? "",
          challengeText: args.challenge_text ?? "",
          visibility: visibilityOf(args.visibility),
        });
        const r = await context.engine.callPlaybook(context.engine.playbook.addLesson, request, context.scope);
        return structured({ lesson: lessonSummary(r.lesson), merged: r.merged, archived: r.archived });
      }),
  ),
];
