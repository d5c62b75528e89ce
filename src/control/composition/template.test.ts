import { describe, expect, it } from "vitest";
import { parseOutput, parseReference, referencesOf, renderTemplate, TemplateError, type TemplateScope } from "./template.js";

const scope: TemplateScope = {
  params: { city: "Oslo", days: 3, tags: ["a", "b"] },
  steps: {
    geo: {
      output: { lat: 59.9, lon: 10.7, names: ["Oslo"] },
      stdout: '{"lat": 59.9}\n',
      stderr: "",
      exit_code: 0,
      success: true,
      files: [],
    },
    raw: {
      output: undefined,
      stdout: "plain text\n",
      stderr: "warn\n",
      exit_code: 0,
      success: true,
      files: ["chart.svg", "report/summary.csv"],
    },
  },
};

describe("templates", () => {
  it("keeps the JSON type of a whole placeholder and interpolates text elsewhere", () => {
    expect(
      renderTemplate({ lat: "{{steps.geo.output.lat}}", n: "{{params.days}}", label: "{{params.city}} in {{params.days}} days" }, scope),
    ).toEqual({
      lat: 59.9,
      n: 3,
      label: "Oslo in 3 days",
    });
  });

  it("reads array items, stdout, exit codes and whole objects", () => {
    expect(
      renderTemplate(["{{params.tags[1]}}", "{{steps.raw.stdout}}", "{{steps.geo.exit_code}}", "{{steps.geo.output}}"], scope),
    ).toEqual(["b", "plain text\n", 0, { lat: 59.9, lon: 10.7, names: ["Oslo"] }]);
    expect(renderTemplate("at {{steps.geo.output.names}}", scope)).toBe('at ["Oslo"]');
  });

  it("fails on a missing value, naming the placeholder, instead of rendering an empty string", () => {
    expect(() => renderTemplate({ x: "{{steps.geo.output.alt}}" }, scope)).toThrow(
      new TemplateError("steps.geo.output.alt", 'steps.geo.output has no field "alt"'),
    );
    expect(() => renderTemplate("{{params.tags[5]}}", scope)).toThrow(/params.tags has no item 5/);
    expect(() => renderTemplate("{{steps.later.stdout}}", scope)).toThrow(/step "later" did not run/);
    expect(() => renderTemplate("{{steps.raw.output.x}}", scope)).toThrow(/stdout of step "raw" is not JSON/);
  });

  it("reads the paths of a step's output files as an array, or one of them", () => {
    expect(renderTemplate({ all: "{{steps.raw.files}}", first: "{{steps.raw.files[0]}}" }, scope)).toEqual({
      all: ["chart.svg", "report/summary.csv"],
      first: "chart.svg",
    });
    expect(renderTemplate("/sandbox/in/steps/raw/{{steps.raw.files[1]}}", scope)).toBe("/sandbox/in/steps/raw/report/summary.csv");
    expect(renderTemplate("{{steps.geo.files}}", scope)).toEqual([]);
    expect(() => renderTemplate("{{steps.raw.files[2]}}", scope)).toThrow(/steps.raw.files has no item 2/);
    expect(parseReference("steps.raw.files")).toMatchObject({ root: "steps", step: "raw", field: "files", path: [] });
  });

  it("parses references and refuses malformed ones", () => {
    expect(parseReference(" steps.geo.output.names[0] ")).toMatchObject({
      root: "steps",
      step: "geo",
      field: "output",
      path: ["names", 0],
    });
    expect(() => parseReference("env.HOME")).toThrow(/starts with "params" or "steps/);
    expect(() => parseReference("steps.geo")).toThrow(/steps.<id>.output/);
    expect(() => parseReference("steps.geo.stdout.x")).toThrow(/has no fields/);
    expect(() => parseReference("params.a b")).toThrow(/cannot read/);
  });

  it("finds every reference at any depth (object keys are not templated)", () => {
    const found = referencesOf({ "{{params.k}}": ["{{params.a}}", { deep: "x {{steps.s.exit_code}} y" }], n: 1 });
    expect(found.map((r) => r.text)).toEqual(["params.a", "steps.s.exit_code"]);
  });

  it("parses stdout as JSON only when it is JSON", () => {
    expect(parseOutput('{"a": 1}\n')).toEqual({ a: 1 });
    expect(parseOutput("hello\n")).toBeUndefined();
    expect(parseOutput("")).toBeUndefined();
  });

  it("reads no output nested deeper than compositions handle, and says why when a template asks for it", () => {
    const deep = `${"[".repeat(30_000)}${"]".repeat(30_000)}`;
    expect(parseOutput(deep)).toBeUndefined();
    const values = { output: parseOutput(deep), stdout: deep, stderr: "", exit_code: 0, success: true, files: [] };
    expect(() => renderTemplate("{{steps.s.output}}", { params: {}, steps: { s: values } })).toThrow(
      /the stdout of step "s" nests arrays and objects more than 128 levels deep/,
    );
    expect(() => renderTemplate("{{steps.s.output}}", { params: {}, steps: { s: { ...values, stdout: "hi" } } })).toThrow(
      /the stdout of step "s" is not JSON/,
    );
  });
});
