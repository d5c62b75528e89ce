import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import { compileCondition } from "./condition.js";
import { CONDITION_LIMITS, evaluateCondition } from "./condition-evaluation.js";
import type { TemplateScope } from "./template.js";

const scope: TemplateScope = {
  params: { city: "Oslo", days: 3, units: "metric" },
  steps: { geo: { output: { lat: 59.9, country: "NO" }, stdout: "{}", stderr: "", exit_code: 0, success: true, files: [] } },
};
const earlier = new Set(["geo"]);
const evaluate = (text: string): Promise<boolean> => evaluateCondition(compileCondition(text, earlier, "when").text, scope);

describe("conditions (JSONata)", () => {
  it("evaluates comparisons, boolean logic and functions over params and earlier steps", async () => {
    expect(await evaluate('params.units = "metric" and steps.geo.output.lat > 50')).toBe(true);
    expect(await evaluate("steps.geo.exit_code != 0")).toBe(false);
    expect(await evaluate('$contains(params.city, "Os") and $count([1,2,3]) = 3')).toBe(true);
  });

  it("casts non-boolean values as JSONata's $boolean does; a missing value is false", async () => {
    expect(await evaluate("params.days")).toBe(true);
    expect(await evaluate('""')).toBe(false);
    expect(await evaluate("params.missing")).toBe(false);
  });

  it("refuses at compile time what does not parse or reads anything but params and earlier steps", () => {
    expect(() => compileCondition("params.days >", earlier, "steps[1].when")).toThrow(InvalidArgumentError);
    expect(() => compileCondition("params.days >", earlier, "steps[1].when")).toThrow(/steps\[1\].when: does not parse/);
    expect(() => compileCondition("steps.later.success", earlier, "when")).toThrow(/steps.later, which is not an earlier step/);
    expect(() => compileCondition("env.HOME", earlier, "when")).toThrow(/reads "env"/);
    expect(() => compileCondition("steps.geo.outptu.lat", earlier, "when")).toThrow(/steps.<id>.output/);
    // Text that would close the evaluation's $boolean(( … )) wrapper early does not parse either.
    expect(() => compileCondition("params.days)) or ((true", earlier, "when")).toThrow(/does not parse/);
  });

  it("gives no access to the host: no eval, no process, no regular expressions", async () => {
    // $eval evaluates JSONata, not JavaScript: "process.exit" is a path into the data, which is missing.
    expect(await evaluate('$eval("process.exit(1)")')).toBe(false);
    // No host object is bound: $process is an unbound variable (undefined), calling a missing function fails.
    expect(await evaluate("$process.exit(1)")).toBe(false);
    await expect(evaluate('$require("fs")')).rejects.toThrow(/non-function/);
    expect(() => compileCondition("$contains(params.city, /O.*/)", earlier, "when")).toThrow(/regular expressions/);
    // Nor one built at run time.
    await expect(evaluate('$eval("$contains(\\"a\\", /a/)")')).rejects.toThrow(/regular expressions/);
  });

  it("stops an endless recursion within its box", async () => {
    await expect(evaluate("($f := function($x) { $f($x + 1) }; $f(0))")).rejects.toThrow(/stack|depth|timeout/i);
  });

  it("bounds the built-ins that build a long string from short arguments, before they build it", async () => {
    const over = CONDITION_LIMITS.stringChars + 1;
    await expect(evaluate('$length($pad("x", 250000000)) > 0')).rejects.toThrow(
      /^\$pad would build a string of 250000000 characters; the limit is 1000000 \(at character \d+\)$/,
    );
    await expect(evaluate(`$pad("x", -${over})`)).rejects.toThrow(/\$pad would build a string of 1000001 characters/);
    // Long strings from the payload, so that nothing before the call can use up JSONata's time limit on a busy machine.
    const long = { params: { s: "x".repeat(600_000), a: "a".repeat(500_000) }, steps: {} };
    await expect(evaluateCondition("$length($join([params.s, params.s])) > 0", long)).rejects.toThrow(
      /\$join would build a string of 1200000/,
    );
    await expect(evaluateCondition('$length($replace(params.a, "a", "bbb")) > 0', long)).rejects.toThrow(
      /\$replace would build a string of 1500000/,
    );
    // Within the bound they behave as JSONata's own.
    expect(await evaluate('$pad("x", 4, "ab") = "xaba" and $pad("x", -3) = "  x"')).toBe(true);
    expect(await evaluate('$join(["a", "b", "c"], "-") = "a-b-c" and $join(["a"]) = "a"')).toBe(true);
    expect(await evaluate('$replace("a.a.a", ".", "::", 1) = "a::a.a" and $replace(params.city, "O", "") = "slo"')).toBe(true);
    expect(await evaluate(`$pad("", ${CONDITION_LIMITS.stringChars}) != ""`)).toBe(true);
  });
});
