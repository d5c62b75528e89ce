import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import type { ExecutionResult, RunInputFile, RunOutputFile } from "../../execution/index.js";
import { parseCompositionPayload, runComposition, type StepInvoker } from "./composed-run.js";
import { ConditionError, type ConditionEvaluator } from "./condition.js";
import { definitionFromInput, type StepInput } from "./definition.js";
import { refuseStepsPaths } from "./step-files.js";

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

  describe("files (docs/composition.md#files)", () => {
    const input = (path: string, text: string): RunInputFile => ({ path, content: Buffer.from(text) });
    const output = (path: string, text: string, truncated = false): RunOutputFile => ({
      path,
      sizeBytes: text.length,
      sha256: "",
      content: Buffer.from(text),
      truncated,
      mediaType: "text/plain",
    });
    /** Each step leaves the files the table gives its skill; records what each step was handed. */
    function filing(outputs: Record<string, RunOutputFile[]>, warnings: Record<string, string[]> = {}) {
      const handed: Record<string, string[]> = {};
      const invoke: StepInvoker = async (ref, payload, files) => {
        handed[ref.name] = files.map((f) => `${f.path}=${f.content.toString()}`);
        const result = { ...ran(`${payload}\n`), outputFiles: outputs[ref.name] ?? [], fileWarnings: warnings[ref.name] ?? [] };
        return { skill: ref.name, version: 1, result };
      };
      return { invoke, handed };
    }
    const limits = { maxFiles: 64, maxTotalBytes: 1024 };

    it("hands every step the inputs and every earlier step's files; the result carries the last step's", async () => {
      const { invoke, handed } = filing(
        { a: [output("chart.svg", "<svg/>")], b: [output("sum.txt", "6")] },
        { b: ["skipped fifo under /sandbox/out: a fifo, not a regular file"] },
      );
      const definition = definitionFromInput(
        [step("one", { skill: "a" }), step("two", { skill: "b", args: '{"paths": "{{steps.one.files}}"}' }), step("three", { skill: "c" })],
        "",
      );
      const run = await runComposition(definition, {}, invoke, evaluator({}), { inputs: [input("data.csv", "1,2,3")], limits });
      expect(handed).toEqual({
        a: ["data.csv=1,2,3"],
        b: ["data.csv=1,2,3", "steps/one/chart.svg=<svg/>"],
        c: ["data.csv=1,2,3", "steps/one/chart.svg=<svg/>", "steps/two/sum.txt=6"],
      });
      expect(run.steps[1]?.result?.stdout).toBe('{"paths":["chart.svg"]}\n');
      // The last step that ran left no file: the composition hands back none.
      expect(run.result.outputFiles).toEqual([]);
      expect(run.result.fileWarnings).toBeUndefined();
      expect(run.warnings).toEqual(['step "two": skipped fifo under /sandbox/out: a fifo, not a regular file']);
    });

    it("returns the files of the last step that ran, also with an output template or when a step stopped it", async () => {
      const { invoke } = filing({ a: [output("a.txt", "a")], b: [output("b.txt", "b")] });
      const templated = definitionFromInput([step("one", { skill: "a" }), step("two", { skill: "b" })], '{"done": true}');
      expect((await runComposition(templated, {}, invoke, evaluator({}))).result.outputFiles?.map((f) => f.path)).toEqual(["b.txt"]);
      const failing: StepInvoker = async (ref, payload, files) =>
        ref.name === "b" ? { skill: "b", version: 1, result: { ...ran(""), success: false, exitCode: 1 } } : invoke(ref, payload, files);
      const stopped = await runComposition(templated, {}, failing, evaluator({}));
      expect(stopped.result.success).toBe(false);
      // The failed step ran and left nothing: its (empty) files are the composition's.
      expect(stopped.result.outputFiles).toBeUndefined();
      const skipped = definitionFromInput([step("one", { skill: "a" }), step("two", { skill: "b", when: "no" })], "");
      expect((await runComposition(skipped, {}, invoke, evaluator({ no: false }))).result.outputFiles?.map((f) => f.path)).toEqual([
        "a.txt",
      ]);
    });

    it("leaves out the oldest steps' files past the input-file limits, says so, and never hands on a truncated file", async () => {
      const { invoke, handed } = filing({
        a: [output("old.bin", "x".repeat(600))],
        b: [output("new.bin", "y".repeat(300)), output("cut.bin", "z", true)],
      });
      const definition = definitionFromInput([step("one", { skill: "a" }), step("two", { skill: "b" }), step("three", { skill: "c" })], "");
      const run = await runComposition(definition, {}, invoke, evaluator({}), { inputs: [input("in.txt", "i".repeat(200))], limits });
      expect(handed.b?.map((f) => f.split("=")[0])).toEqual(["in.txt", "steps/one/old.bin"]);
      // 200 + 300 + 600 bytes would pass the 1024: the oldest step's files are left out.
      expect(handed.c?.map((f) => f.split("=")[0])).toEqual(["in.txt", "steps/two/new.bin"]);
      expect(run.warnings).toEqual([
        'step "two": its file cut.bin came back truncated; later steps are not handed it',
        'step "three" was not handed the files of step "one": with them it would take more than the 64 files or 1024 bytes a run may take ' +
          "(SKILL_ENGINE_INPUT_FILES_MAX, SKILL_ENGINE_INPUT_FILES_MB)",
      ]);
    });

    it("in a nested composition, its own steps' files take the place of what it was handed under their ids", async () => {
      const { invoke, handed } = filing({ a: [output("mine.txt", "inner")] });
      const definition = definitionFromInput([step("one", { skill: "a" }), step("two", { skill: "b" })], "");
      // What the outer composition handed this one: the caller's file and its own step "one"'s and "prep"'s.
      const inputs = [input("data.csv", "d"), input("steps/one/theirs.txt", "outer"), input("steps/prep/p.txt", "p")];
      await runComposition(definition, {}, invoke, evaluator({}), { inputs, limits });
      expect(handed.a).toEqual(["data.csv=d", "steps/prep/p.txt=p"]);
      expect(handed.b).toEqual(["data.csv=d", "steps/prep/p.txt=p", "steps/one/mine.txt=inner"]);
    });

    it("refuses a caller's file at steps/ for a composed skill, naming the file and the rule", () => {
      expect(() => refuseStepsPaths("files", [input("data.csv", ""), input("steps/a/x", "")])).toThrow(
        /^files\[1\] \("steps\/a\/x"\): a composed skill's files may not be at steps\/: .*docs\/composition.md#files/,
      );
      expect(() => refuseStepsPaths("files", [input("steps", "")])).toThrow(InvalidArgumentError);
      expect(() => refuseStepsPaths("files", [input("stepsx/a", ""), input("a/steps/b", "")])).not.toThrow();
    });
  });
});
