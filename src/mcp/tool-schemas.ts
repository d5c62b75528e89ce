import { z } from "zod";

/**
 * The meta tools' arguments and results (docs/mcp.md#tools). The names and fields are the contract MCP
 * clients are written against. Arguments are checked with these schemas before any call is made: a
 * mismatch is a JSON-RPC invalid-params error naming the field, never a tool result.
 */

/** A JSON object, or JSON text of one (models write either). */
const jsonObjectOrText = z.union([z.record(z.string(), z.unknown()), z.string()]);
const names = z.array(z.string()).max(64);

export const findSkillsArguments = z
  .object({
    query: z.string().min(1).max(32_000).describe("What the user wants done, in their words."),
    limit: z.number().int().min(1).max(50).optional().describe("How many skills at most (default 5)."),
    min_relevance: z
      .number()
      .min(0)
      .max(1)
      .optional()
      .describe("Leave out skills less likely than this to fit (0..1; default: the service's). 0 keeps every skill."),
  })
  .strict();

export const runSkillArguments = z
  .object({
    name: z.string().min(1).max(128).describe("The skill to run."),
    arguments: z.record(z.string(), z.unknown()).optional().describe("The skill's input, matching its input schema (default {})."),
    route_id: z.string().max(200).optional().describe("The route_id of the find_skills answer that proposed it, so routing learns."),
  })
  .strict();

export const getSkillArguments = z.object({ name: z.string().min(1).max(128) }).strict();

export const listSkillsArguments = z
  .object({
    owner: z.string().max(128).optional().describe("Only skills of this agent (among those you may see)."),
    include_inactive: z.boolean().optional().describe("Also list retired and deleted skills."),
  })
  .strict();

export const registerSkillArguments = z
  .object({
    name: z
      .string()
      .min(1)
      .max(64)
      .describe("The tool name: ^[A-Za-z_][A-Za-z0-9_-]{0,63}$. An existing name of yours gets a new version."),
    description: z.string().min(1).describe("What it does and when to use it: routing finds it by this."),
    parameters_schema: jsonObjectOrText.describe("JSON Schema of the input object (an object, or its JSON text)."),
    code: z.string().min(1).describe("Python 3 source; the input arrives as JSON text in sys.argv[1]; print the result on stdout."),
    test_payload: jsonObjectOrText.describe("The input of the test run, which must exit 0 and print something."),
    example_queries: names.optional().describe("Requests this skill answers, used by routing from the start."),
    requirements: names.optional().describe('Python packages as PEP 508 specifiers ("PyYAML==6.0.1"), from the operator\'s index.'),
    system_packages: names.optional().describe('Debian packages ("python3-numpy").'),
    secrets: names.optional().describe("Names of your secrets the skill reads from its environment (values are set with the API)."),
    network_allow: names.optional().describe('Hosts its runs may reach ("api.example.com", "*.example.com:443"); default: no network.'),
    visibility: z.enum(["private", "public"]).optional().describe("private (default for a new skill) or public."),
    depends_on: names.optional().describe('Skills it imports: "name" or "name@version".'),
  })
  .strict();

export const patchSkillArguments = z
  .object({
    name: z.string().min(1).max(128),
    find: z.string().min(1).describe("Exact text of the active code; it must occur exactly once."),
    replace: z.string(),
    test_payload: jsonObjectOrText.optional().describe("Input of the test run; default: the active version's test input."),
  })
  .strict();

export const recordOutcomeArguments = z
  .object({
    invocation_id: z.string().min(1).max(64).describe("From run_skill's result."),
    success: z.boolean().describe("Whether the run achieved its goal (an exit 0 that did not help is a failure)."),
    note: z.string().max(2_000).optional(),
    name: z.string().max(128).optional().describe("The skill; needed only for a run of another MCP session."),
  })
  .strict();

export const routeFeedbackArguments = z
  .object({
    route_id: z.string().min(1).max(200),
    name: z.string().min(1).max(128),
    success: z.boolean(),
    fallback: z.boolean().optional().describe("You used something else instead of this skill."),
  })
  .strict();

export const getLessonsArguments = z
  .object({
    query: z.string().min(1).max(32_000).describe("The task at hand."),
    limit: z.number().int().min(1).max(50).optional().describe("How many lessons at most (default 5)."),
  })
  .strict();

export const addLessonArguments = z
  .object({
    trigger: z.string().min(1).describe("When this kind of task comes up (a task class, not one example)."),
    correct_pattern: z.string().min(1).describe("What to do."),
    anti_pattern: z.string().optional().describe("What to avoid."),
    domains: names.optional(),
    confidence: z.number().min(0).max(1).optional(),
    source: z.string().max(200).optional().describe('Where it came from, e.g. "self-play" or "user".'),
    challenge_text: z.string().optional().describe("The task's text, which the lesson must not merely restate (not stored)."),
    visibility: z.enum(["private", "public"]).optional(),
  })
  .strict();

// Results. Every field is always present, so that clients may validate structured content against these.

const skillSummary = z.object({
  name: z.string(),
  description: z.string(),
  version: z.number(),
  status: z.string(),
  owner: z.string(),
  visibility: z.string(),
  input_schema: z.record(z.string(), z.unknown()),
  usage_count: z.number(),
  failure_count: z.number(),
  warning: z.string(),
  status_reason: z.string(),
});

const testRun = z.object({
  success: z.boolean(),
  exit_code: z.number(),
  duration_ms: z.number(),
  stdout: z.string(),
  error_summary: z.string(),
});

const lessonSummary = z.object({
  id: z.string(),
  trigger: z.string(),
  anti_pattern: z.string(),
  correct_pattern: z.string(),
  domains: z.array(z.string()),
  confidence: z.number(),
});

export const findSkillsResult = z.object({
  route_id: z.string(),
  skills: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      relevance: z.number().nullable(),
      status: z.string(),
      kind: z.string(),
      skill_id: z.string(),
      input_schema: z.record(z.string(), z.unknown()),
      /** Set for an instructions-only skill: read it (get_skill / its skill:// resource), never run it. */
      instructions: z.string(),
      warnings: z.array(z.string()),
    }),
  ),
  /** True when no skill cleared the relevance floor: nothing in the library fits the request. */
  no_fit: z.boolean(),
  degraded: z.array(z.string()),
  warnings: z.array(z.string()),
});

export const getSkillResult = z.object({
  skill: skillSummary,
  kind: z.string(),
  skill_id: z.string(),
  code: z.string(),
  depends_on: z.array(z.string()),
  requirements: z.array(z.string()),
  system_packages: z.array(z.string()),
  secrets: z.array(z.string()),
  network_allow: z.array(z.string()),
});

export const listSkillsResult = z.object({ skills: z.array(skillSummary) });

export const registerSkillResult = z.object({
  skill: skillSummary,
  /** Absent when `unchanged`: nothing was tested. */
  test: testRun.nullable(),
  /** The active version already had this code and these declarations: no test run, no new version. */
  unchanged: z.boolean(),
  /** One line each: an example query the skill is not found by, another skill's query it would take. */
  routing_warnings: z.array(z.string()),
  normalizations: z.array(z.string()),
  warnings: z.array(z.string()),
  similar_skills: z.array(z.object({ name: z.string(), description_similarity: z.number(), near_duplicate: z.boolean() })),
});

export const patchSkillResult = z.object({
  skill: skillSummary,
  test: testRun,
  normalizations: z.array(z.string()),
  warnings: z.array(z.string()),
});

export const recordOutcomeResult = z.object({ exit_code_success: z.boolean(), overridden: z.boolean(), skill: skillSummary });
export const routeFeedbackResult = z.object({ credited: z.boolean() });
export const getLessonsResult = z.object({
  context: z.string(),
  lessons: z.array(lessonSummary),
  retrieval_id: z.string(),
  warnings: z.array(z.string()),
});
export const addLessonResult = z.object({ lesson: lessonSummary, merged: z.boolean(), archived: z.array(z.string()) });

export type SkillSummary = z.infer<typeof skillSummary>;
export type TestRun = z.infer<typeof testRun>;
export type LessonSummary = z.infer<typeof lessonSummary>;

/** JSON Schema of a zod schema, as a tool definition carries it (the dialect is MCP's default, 2020-12). */
export function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): { type: "object"; [key: string]: unknown } {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io }) as Record<string, unknown>;
  return { ...rest, type: "object" };
}

/**
 * The first problem zod found, naming the field: `limit: Too small: expected number to be >=1`.
 * Unknown fields name themselves (`unrecognized key: "x"`).
 */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => {
      const field = issue.path.map(String).join(".");
      return field === "" ? issue.message : `${field}: ${issue.message}`;
    })
    .join("; ");
}
