import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult } from "../../execution/index.js";
import { parseCompositionPayload, runComposition, type StepInvoker } from "./composed-run.js";
import { ConditionError, type ConditionEvaluator } from "./condition.js";
import { definitionFromInput, type StepInput } from "./definition.js";

const ran = (stdout: string): ExecutionResult => ({
  exitCode: 0,
  stdout,
  stderr: "",
  durationMs: 1,
  timedOut: false,
  oomKilled: false,
  stdoutTruncated: false,
  stderrTruncated: false,
  errorSummary: "",
  success: true,
});

const step = (id: string, over: Partial<StepInput> = {}): StepInput => ({
  id,
  skill: "echo",
  args: "{}",
  when: "",
  onFailure: "stop",
  ...over,
});

/** Echoes each step's payload as its stdout, and records the payloads. */
function echo(): { invoke: StepInvoker; payloads: string[] } {
  const payloads: string[] = [];
  return {
    payloads,
    invoke: async (ref, payload) => {
      payloads.push(payload);
      return { skill: ref.name, version: 1, result: ran(`${payload}\n`) };
    },
  };
}

/** An evaluator that answers from a table, or fails a condition as the condition host does. */
const evaluator = (answers: Record<string, boolean | string>): ConditionEvaluator => ({
  evaluate: async (text) => {
    const answer = answers[text];
    if (typeof answer === "string") throw new ConditionError(text, answer);
    return answer === true;
  },
  close: async () => undefined,
});

const nested = (levels: number): unknown => JSON.parse(`${"[".repeat(levels)}1${"]".repeat(levels)}`);

describe("running a composition", () => {
  it("asks the evaluator for each condition: a false one skips its step", async () => {
    const { invoke, payloads } = echo();
    const definition = definitionFromInput([step("a", { when: "params.go", args: '{"n": 1}' }), step("b", { args: '{"n": 2}' })], "");
    const run = await runComposition(definition, { go: false }, invoke, evaluator({ "params.go": false }));
    expect(run.steps.map((s) => [s.id, s.skipped])).toEqual([
      ["a", true],
      ["b", false],
    ]);
    expect(payloads).toEqual(['{"n":2}']);
  });

  it("makes a condition's failure an error of its step, in-band, naming the cause", async () => {
    const { invoke, payloads } = echo();
    const definition = definitionFromInput([step("a", { when: "runaway" }), step("b")], "");
    const run = await runComposition(definition, {}, invoke, evaluator({ runaway: "it ran longer than 1000 ms and was stopped" }));
    expect(run.result).toMatchObject({
      success: false,
      errorSummary: 'step "a" (echo) failed: condition "runaway" failed: it ran longer than 1000 ms and was stopped',
    });
    expect(payloads).toEqual([]);
  });

  it("fails a step whose rendered payload nests too deeply, instead of serializing it", async () => {
    const { invoke, payloads } = echo();
    // The template (2 levels) and the parameter (127 levels) are each within the limit; together they are not.
    const definition = definitionFromInput([step("a", { args: '{"wrap": ["{{params.deep}}"]}' })], "");
    const run = await runComposition(definition, { deep: nested(127) }, invoke, evaluator({}));
    expect(run.steps[0]?.error).toBe(
      "its rendered payload nests arrays and objects more than 128 levels deep; JSON in a composition nests at most 128 levels",
    );
    expect(run.result.success).toBe(false);
    expect(payloads).toEqual([]);
  });

  it("refuses a payload nested too deeply as an invalid argument of the field it came in", () => {
    expect(parseCompositionPayload('{"a": [1]}', "payload")).toEqual({ a: [1] });
    const deep = `{"a": ${"[".repeat(30_000)}${"]".repeat(30_000)}}`;
    expect(() => parseCompositionPayload(deep, "payload")).toThrow(InvalidArgumentError);
    expect(() => parseCompositionPayload(deep, "test_payload")).toThrow(
      /^test_payload: nests arrays and objects more than 128 levels deep/,
    );
  });
});
