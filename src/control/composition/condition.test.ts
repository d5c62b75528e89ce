import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import { compileCondition, ConditionError } from "./condition.js";
import type { TemplateScope } from "./template.js";

const scope: TemplateScope = {
  params: { city: "Oslo", days: 3, units: "metric" },
  steps: { geo: { output: { lat: 59.9, country: "NO" }, stdout: "{}", stderr: "", exit_code: 0, success: true } },
};
const earlier = new Set(["geo"]);

describe("conditions (JSONata)", () => {
  it("evaluates comparisons, boolean logic and functions over params and earlier steps", async () => {
    expect(await compileCondition('params.units = "metric" and steps.geo.output.lat > 50', earlier, "when").evaluate(scope)).toBe(true);
    expect(await compileCondition("steps.geo.exit_code != 0", earlier, "when").evaluate(scope)).toBe(false);
    expect(await compileCondition('$contains(params.city, "Os") and $count([1,2,3]) = 3', earlier, "when").evaluate(scope)).toBe(true);
  });

  it("casts non-boolean values as JSONata's $boolean does; a missing value is false", async () => {
    expect(await compileCondition("params.days", earlier, "when").evaluate(scope)).toBe(true);
    expect(await compileCondition('""', earlier, "when").evaluate(scope)).toBe(false);
    expect(await compileCondition("params.missing", earlier, "when").evaluate(scope)).toBe(false);
  });

  it("refuses at compile time what does not parse or reads anything but params and earlier steps", () => {
    expect(() => compileCondition("params.days >", earlier, "steps[1].when")).toThrow(InvalidArgumentError);
    expect(() => compileCondition("params.days >", earlier, "steps[1].when")).toThrow(/steps\[1\].when: does not parse/);
    expect(() => compileCondition("steps.later.success", earlier, "when")).toThrow(/steps.later, which is not an earlier step/);
    expect(() => compileCondition("env.HOME", earlier, "when")).toThrow(/reads "env"/);
    expect(() => compileCondition("steps.geo.outptu.lat", earlier, "when")).toThrow(/steps.<id>.output/);
  });

  it("gives no access to the host: no eval, no process, no regular expressions", async () => {
    // $eval evaluates JSONata, not JavaScript: "process.exit" is a path into the data, which is missing.
    expect(await compileCondition('$eval("process.exit(1)")', earlier, "when").evaluate(scope)).toBe(false);
    // No host object is bound: $process is an unbound variable (undefined), calling a missing function fails.
    expect(await compileCondition("$process.exit(1)", earlier, "when").evaluate(scope)).toBe(false);
    await expect(compileCondition('$require("fs")', earlier, "when").evaluate(scope)).rejects.toThrow(ConditionError);
    expect(() => compileCondition("$contains(params.city, /O.*/)", earlier, "when")).toThrow(/regular expressions/);
  });

  it("stops an endless recursion within its box", async () => {
    const endless = compileCondition("($f := function($x) { $f($x + 1) }; $f(0))", earlier, "when");
    await expect(endless.evaluate(scope)).rejects.toThrow(ConditionError);
  });
});
