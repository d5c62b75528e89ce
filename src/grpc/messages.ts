import type { SkillRecord } from "../control/index.js";
import type { ExecutionResult as DomainExecutionResult } from "../execution/index.js";
import { type ExecutionResult, type Skill, SkillStatus } from "../gen/skillengine/v1/skill_engine.js";

/** Domain → wire mapping; the gRPC layer holds no other logic. */
export function toSkillMessage(record: SkillRecord): Skill {
  return {
    name: record.name,
    description: record.description,
    parametersSchema: record.parametersSchema,
    status: record.status === "degraded" ? SkillStatus.SKILL_STATUS_DEGRADED : SkillStatus.SKILL_STATUS_ACTIVE,
    version: record.version,
    contentHash: record.contentHash,
    usageCount: record.usageCount,
    failureCount: record.failureCount,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    lastInvokedAt: record.lastInvokedAt,
  };
}

export function toExecutionResultMessage(result: DomainExecutionResult): ExecutionResult {
  return {
    exitCode: result.exitCode,
    stdout: result.stdout,
    stderr: result.stderr,
    durationMs: result.durationMs,
    timedOut: result.timedOut,
    oomKilled: result.oomKilled,
    stdoutTruncated: result.stdoutTruncated,
    stderrTruncated: result.stderrTruncated,
    errorSummary: result.errorSummary,
    success: result.success,
  };
}
