import { performance } from "node:perf_hooks";
import type { ExecutionResult, RunInputFile } from "../../execution/index.js";
import { InvalidArgumentError } from "../../errors/index.js";
import { ConditionError, type ConditionEvaluator } from "./condition.js";
import { COMPOSITION_LIMITS, jsonDepth, tooDeep, type CompositionDefinition, type ComposedStep, type SkillRef } from "./definition.js";
import { type CompositionFiles, filesForStep, type HandedOn, handOn } from "./step-files.js";
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

/**
 * Runs one step's skill exactly as InvokeSkill would (plain or composed), telemetry included, with
 * `files` under its /sandbox/in/ (docs/composition.md#files).
 */
export type StepInvoker = (
  ref: SkillRef,
  payload: string,
  files: readonly RunInputFile[],
) => Promise<{ readonly skill: string; readonly version: number; readonly result: ExecutionResult }>;

export interface ComposedRunResult {
  /** Its output files are the last step that ran's; file warnings are in `warnings`, each naming its step. */
  readonly result: ExecutionResult;
  readonly steps: StepOutcome[];
  /** What of the steps' files was not returned or not handed on, and why (docs/composition.md#files). */
  readonly warnings: string[];
}

/** No files in, the default limits: a composition's test run and re-tests. */
const NO_FILES: CompositionFiles = { inputs: [], limits: { maxFiles: 64, maxTotalBytes: 16 * 1024 * 1024 } };

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
 * Conditions are evaluated by `conditions`, away from the service's event loop. Each step is handed
 * `files`' inputs and the earlier steps' output files (docs/composition.md#files).
 */
export async function runComposition(
  definition: CompositionDefinition,
  params: unknown,
  invoke: StepInvoker,
  conditions: ConditionEvaluator,
  files: CompositionFiles = NO_FILES,
): Promise<ComposedRunResult> {
  const started = performance.now();
  const steps: Record<string, StepValues> = {};
  const outcomes: StepOutcome[] = [];
  const warnings: string[] = [];
  const handed: HandedOn[] = [];
  const ownIds = new Set(definition.steps.map((step) => step.id));
  const scope = (): TemplateScope => ({ params, steps });
  let last: ExecutionResult | undefined;
  const finish = (result: ExecutionResult): ComposedRunResult => {
    // The composition hands back the last step that ran's files; their warnings are above, by step.
    const { fileWarnings: _fileWarnings, networkWarnings: _networkWarnings, outputFiles: _outputFiles, ...rest } = result;
    return { result: { ...rest, ...(last?.outputFiles ? { outputFiles: last.outputFiles } : {}) }, steps: outcomes, warnings };
  };
  for (const [index, step] of definition.steps.entries()) {
    const given = filesForStep(step.id, files, ownIds, handed);
    const outcome = await runStep(step, scope(), (ref, payload) => invoke(ref, payload, given.files), conditions);
    outcomes.push(outcome);
    if (outcome.skipped) continue;
    // Said only for a step that ran: it is the one that missed them.
    if (given.warning && outcome.result) warnings.push(given.warning);
    if (outcome.result) {
      last = outcome.result;
      const outputs = outcome.result.outputFiles ?? [];
      steps[step.id] = {
        output: parseOutput(outcome.result.stdout),
        stdout: outcome.result.stdout,
        stderr: outcome.result.stderr,
        exit_code: outcome.result.exitCode,
        success: outcome.result.success,
        files: outputs.map((file) => file.path),
      };
      warnings.push(...(outcome.result.fileWarnings ?? []).map((warning) => `step "${step.id}": ${warning}`));
      warnings.push(...(outcome.result.networkWarnings ?? []).map((warning) => `step "${step.id}": ${warning}`));
      const passed = handOn(step.id, outputs);
      handed.push(passed.handed);
      // What is not handed on matters only when a step follows.
      if (index < definition.steps.length - 1) warnings.push(...passed.warnings);
    }
    const failed = outcome.error !== "" || !outcome.result?.success;
    if (failed && step.onFailure === "stop") return finish(failedComposition(step, outcome, elapsed(started)));
  }
  return finish(composedResult(definition, scope(), last, elapsed(started)));
}

async function runStep(
  step: ComposedStep,
  scope: TemplateScope,
  invoke: (ref: SkillRef, payload: string) => ReturnType<StepInvoker>,
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
