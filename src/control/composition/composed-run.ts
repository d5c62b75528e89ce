import { performance } from "node:perf_hooks";
import type { ExecutionResult } from "../../execution/index.js";
import { InvalidArgumentError } from "../../errors/index.js";
import { ConditionError, type ConditionEvaluator } from "./condition.js";
import { COMPOSITION_LIMITS, jsonDepth, tooDeep, type CompositionDefinition, type ComposedStep, type SkillRef } from "./definition.js";
import { parseOutput, renderTemplate, TemplateError, type TemplateScope, type StepValues } from "./template.js";

/** One step of a composed run, as InvokeSkillResponse.steps reports it. */
export interface StepOutcome {
  readonly id: string;
  readonly skill: string;
  /** The version that ran; 0 when the step did not run. */
  readonly version: number;
  readonly skipped: boolean;
  /** Undefined when the step was skipped or failed before running (see `error`). */
  readonly result: ExecutionResult | undefined;
  /** A template or condition error of this step. */
  readonly error: string;
}

/** A step's rendered payload does not fit its skill's parameters schema: an error of that step. */
export class StepPayloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StepPayloadError";
  }
}

/** Runs one step's skill exactly as InvokeSkill would (plain or composed), telemetry included. */
export type StepInvoker = (
  ref: SkillRef,
  payload: string,
) => Promise<{ readonly skill: string; readonly version: number; readonly result: ExecutionResult }>;

export interface ComposedRunResult {
  readonly result: ExecutionResult;
  readonly steps: StepOutcome[];
}

/**
 * A composed skill's payload (already checked against its schema) as the value its templates and
 * conditions read: INVALID_ARGUMENT on `field` when it nests deeper than compositions handle
 * (docs/composition.md#definition).
 */
export function parseCompositionPayload(payload: string, field: string): unknown {
  const params = JSON.parse(payload) as unknown;
  if (jsonDepth(params) > COMPOSITION_LIMITS.jsonDepth) throw new InvalidArgumentError(field, tooDeep());
  return params;
}

/**
 * Runs a composition (docs/composition.md#running): steps in order, each through `invoke` (its own
 * fresh container, the same limits and pool as any invocation); a false `when` skips a step; a
 * failed step stops the run unless its `on_failure` is continue. Cancellation and the deadline
 * travel inside `invoke` (the call's signal), so the whole composition shares one deadline.
 * Conditions are evaluated by `conditions`, away from the service's event loop.
 */
export async function runComposition(
  definition: CompositionDefinition,
  params: unknown,
  invoke: StepInvoker,
  conditions: ConditionEvaluator,
): Promise<ComposedRunResult> {
  const started = performance.now();
  const steps: Record<string, StepValues> = {};
  const outcomes: StepOutcome[] = [];
  const scope = (): TemplateScope => ({ params, steps });
  let last: ExecutionResult | undefined;
  for (const step of definition.steps) {
    const outcome = await runStep(step, scope(), invoke, conditions);
    outcomes.push(outcome);
    if (outcome.skipped) continue;
    if (outcome.result) {
      last = outcome.result;
      steps[step.id] = {
        output: parseOutput(outcome.result.stdout),
        stdout: outcome.result.stdout,
        stderr: outcome.result.stderr,
        exit_code: outcome.result.exitCode,
        success: outcome.result.success,
      };
    }
    const failed = outcome.error !== "" || !outcome.result?.success;
    if (failed && step.onFailure === "stop") {
      return { result: failedComposition(step, outcome, elapsed(started)), steps: outcomes };
    }
  }
  return { result: composedResult(definition, scope(), last, elapsed(started)), steps: outcomes };
}

async function runStep(
  step: ComposedStep,
  scope: TemplateScope,
  invoke: StepInvoker,
  conditions: ConditionEvaluator,
): Promise<StepOutcome> {
  const base = { id: step.id, skill: step.skill.name, version: 0, skipped: false, result: undefined, error: "" };
  let payload: string;
  try {
    // Checked by the pre-flight when the composition was registered; evaluated in the condition host.
    if (step.when !== "" && !(await conditions.evaluate(step.when, scope))) return { ...base, skipped: true };
    const rendered = renderTemplate(step.args, scope);
    // A template and the values put into it each nest within the limit; together they may not.
    if (jsonDepth(rendered) > COMPOSITION_LIMITS.jsonDepth) return { ...base, error: `its rendered payload ${tooDeep()}` };
    payload = JSON.stringify(rendered);
  } catch (error) {
    if (error instanceof TemplateError || error instanceof ConditionError) return { ...base, error: error.message };
    throw error;
  }
  let ran: Awaited<ReturnType<StepInvoker>>;
  try {
    ran = await invoke(step.skill, payload);
  } catch (error) {
    if (error instanceof StepPayloadError) return { ...base, error: error.message };
    throw error;
  }
  return { ...base, skill: ran.skill, version: ran.version, result: ran.result };
}

/** The result of a composition stopped by a failed step: that step's run, its summary naming the step. */
function failedComposition(step: ComposedStep, outcome: StepOutcome, durationMs: number): ExecutionResult {
  const cause = outcome.error !== "" ? outcome.error : outcome.result?.errorSummary || "exit code 0 but no output";
  const run = outcome.result;
  return {
    exitCode: run && run.exitCode !== 0 ? run.exitCode : 1,
    stdout: run?.stdout ?? "",
    stderr: run?.stderr ?? "",
    durationMs,
    timedOut: run?.timedOut ?? false,
    oomKilled: run?.oomKilled ?? false,
    stdoutTruncated: run?.stdoutTruncated ?? false,
    stderrTruncated: run?.stderrTruncated ?? false,
    errorSummary: `step "${step.id}" (${step.skill.name}) failed: ${cause}`,
    success: false,
  };
}

/** The output template rendered, or by default the last executed step's run. */
function composedResult(
  definition: CompositionDefinition,
  scope: TemplateScope,
  last: ExecutionResult | undefined,
  durationMs: number,
): ExecutionResult {
  const base = { durationMs, timedOut: false, oomKilled: false, stdoutTruncated: false, stderrTruncated: false };
  if (definition.output !== undefined) {
    try {
      const value = renderTemplate(definition.output, scope);
      const stdout = typeof value === "string" ? value : `${JSON.stringify(value)}\n`;
      const success = stdout !== "";
      return {
        ...base,
        exitCode: 0,
        stdout,
        stderr: "",
        errorSummary: success ? "" : "the output template rendered an empty string",
        success,
      };
    } catch (error) {
      if (!(error instanceof TemplateError)) throw error;
      return { ...base, exitCode: 1, stdout: "", stderr: "", errorSummary: `output: ${error.message}`, success: false };
    }
  }
  if (!last)
    return { ...base, exitCode: 1, stdout: "", stderr: "", errorSummary: "no step ran (every condition was false)", success: false };
  return { ...last, durationMs };
}

function elapsed(started: number): number {
  return Math.max(1, Math.round(performance.now() - started));
}
