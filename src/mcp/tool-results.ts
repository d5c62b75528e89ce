import { status } from "@grpc/grpc-js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ExecutionResult } from "../gen/skillengine/v1/execution.js";
import type { Lesson } from "../gen/skillengine/v1/playbook.js";
import { type Skill, SkillStatus, Visibility } from "../gen/skillengine/v1/skills.js";
import { isServiceError } from "./engine-client.js";
import type { LessonSummary, SkillSummary, TestRun } from "./tool-schemas.js";

/** The gRPC code of a failed call, for clients that act on it: `_meta["skill-engine/code"]`. */
export const CODE_META = "skill-engine/code";

/**
 * Codes whose message tells the model what to change (docs/mcp.md#errors): a tool error carrying the
 * service's message word for word, e.g. a registration's FAILED_PRECONDITION with the test run's cause.
 */
const ACTIONABLE = new Set<number>([
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.FAILED_PRECONDITION,
  status.ALREADY_EXISTS,
  status.PERMISSION_DENIED,
  status.UNAUTHENTICATED,
  status.RESOURCE_EXHAUSTED,
  status.ABORTED,
  status.OUT_OF_RANGE,
]);

export function codeName(code: number): string {
  return (status as unknown as Record<number, string | undefined>)[code] ?? `CODE_${code}`;
}

/** A tool result the model reads as a failure (`isError`), not a protocol error. */
export function toolError(text: string, code?: string, more: string[] = []): CallToolResult {
  return {
    content: [text, ...more].map((t) => ({ type: "text" as const, text: t })),
    isError: true,
    ...(code === undefined ? {} : { _meta: { [CODE_META]: code } }),
  };
}

/**
 * A failed gRPC call as a tool result: the service's own words for what the caller can fix; for
 * anything else (UNAVAILABLE, INTERNAL, a deadline) a plain statement that the service, not the skill,
 * failed. Anything that is not a gRPC error is a bug of ours and is rethrown (JSON-RPC internal error).
 */
export function toolResultOfRpcError(error: unknown): CallToolResult {
  if (!isServiceError(error)) throw error;
  const details = (error.details || error.message).trim();
  const code = codeName(error.code);
  if (ACTIONABLE.has(error.code)) return toolError(details, code);
  if (error.code === status.CANCELLED) return toolError(`cancelled: ${details}`, code);
  return toolError(`the skill engine is unavailable (${code}: ${details}); this is no fault of the skill: try again later`, code);
}

const STATUS_NAMES: Record<number, string> = {
  [SkillStatus.SKILL_STATUS_ACTIVE]: "active",
  [SkillStatus.SKILL_STATUS_DEGRADED]: "degraded",
  [SkillStatus.SKILL_STATUS_DEPRECATED]: "deprecated",
  [SkillStatus.SKILL_STATUS_RETIRED]: "retired",
  [SkillStatus.SKILL_STATUS_DELETED]: "deleted",
};

export function statusName(value: SkillStatus): string {
  return STATUS_NAMES[value] ?? "unspecified";
}

export function visibilityName(value: Visibility): string {
  if (value === Visibility.VISIBILITY_PUBLIC) return "public";
  if (value === Visibility.VISIBILITY_INTERNAL) return "internal";
  return "private";
}

export function visibilityOf(word: "private" | "public" | undefined): Visibility {
  if (word === "public") return Visibility.VISIBILITY_PUBLIC;
  if (word === "private") return Visibility.VISIBILITY_PRIVATE;
  return Visibility.VISIBILITY_UNSPECIFIED;
}

/** A parameters schema (JSON text) as an object; `{type: "object"}` when it is not one. */
export function schemaObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // The registry validated it; a tool definition stays usable regardless.
  }
  return { type: "object" };
}

export function skillSummary(skill: Skill | undefined): SkillSummary {
  return {
    name: skill?.name ?? "",
    description: skill?.description ?? "",
    version: skill?.version ?? 0,
    status: statusName(skill?.status ?? SkillStatus.SKILL_STATUS_UNSPECIFIED),
    owner: skill?.owner ?? "",
    visibility: visibilityName(skill?.visibility ?? Visibility.VISIBILITY_UNSPECIFIED),
    input_schema: schemaObject(skill?.parametersSchema ?? ""),
    usage_count: skill?.usageCount ?? 0,
    failure_count: skill?.failureCount ?? 0,
    warning: skill?.warning ?? "",
    status_reason: skill?.statusReason ?? "",
  };
}

export function testRun(result: ExecutionResult | undefined): TestRun {
  return {
    success: result?.success ?? false,
    exit_code: result?.exitCode ?? 0,
    duration_ms: result?.durationMs ?? 0,
    stdout: result?.stdout ?? "",
    error_summary: result?.errorSummary ?? "",
  };
}

export function lessonSummary(lesson: Lesson | undefined): LessonSummary {
  return {
    id: lesson?.id ?? "",
    trigger: lesson?.trigger ?? "",
    anti_pattern: lesson?.antiPattern ?? "",
    correct_pattern: lesson?.correctPattern ?? "",
    domains: lesson?.domains ?? [],
    confidence: lesson?.confidence ?? 0,
  };
}

/** A structured result, with its JSON as text too (MCP clients without structured content read that). */
export function structured(value: Record<string, unknown>): CallToolResult {
  return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
}

/** JSON text of an argument given as an object or as text (parameters_schema, test_payload). */
export function jsonText(value: string | Record<string, unknown> | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  return typeof value === "string" ? value : JSON.stringify(value);
}
