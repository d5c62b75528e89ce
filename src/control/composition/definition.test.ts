import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import {
  COMPOSITION_LIMITS,
  definitionFromInput,
  jsonDepth,
  parseSkillRef,
  parseStoredDefinition,
  serializeDefinition,
  type StepInput,
} from "./definition.js";

/** JSON text of `levels` arrays inside each other (`[[…[1]…]]`), built without recursion. */
const nested = (levels: number): string => `${"[".repeat(levels)}1${"]".repeat(levels)}`;

const step = (over: Partial<StepInput> = {}): StepInput => ({
  id: "s1",
  skill: "geo",
  args: '{"q": "{{params.city}}"}',
  when: "",
  onFailure: "stop",
  ...over,
});

describe("composition definitions", () => {
  it("round-trips through the canonical store's JSON, which is never mistaken for Python", () => {
    const definition = definitionFromInput(
      [step(), step({ id: "s2", skill: "weather@2", when: "steps.s1.success", onFailure: "continue" })],
      '"{{steps.s2.stdout}}"',
    );
    const stored = serializeDefinition(definition);
    expect(parseStoredDefinition(stored)).toEqual(definition);
    expect(parseStoredDefinition('print("hi")\n')).toBeUndefined();
    expect(parseStoredDefinition('{"kind": "something-else", "steps": []}')).toBeUndefined();
  });

  it("refuses duplicate ids, bad ids, bad references and non-JSON templates", () => {
    expect(() => definitionFromInput([], "")).toThrow(/at least one step/);
    expect(() => definitionFromInput([step(), step()], "")).toThrow(/steps\[1\].id: "s1" is used by an earlier step/);
    expect(() => definitionFromInput([step({ id: "a-b" })], "")).toThrow(/steps\[0\].id/);
    expect(() => definitionFromInput([step({ skill: "geo@0" })], "")).toThrow(/version after @/);
    expect(() => definitionFromInput([step({ args: "{oops" })], "")).toThrow(/steps\[0\].args: is not JSON/);
  });

  it("measures nesting without recursion, stopping just past the limit", () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth({ a: [1, { b: [] }], c: 2 })).toBe(4);
    expect(jsonDepth(JSON.parse(nested(128)))).toBe(128);
    // 30,000 levels would overflow any recursive walk; the count stops at the limit + 1.
    expect(jsonDepth(JSON.parse(nested(30_000)))).toBe(COMPOSITION_LIMITS.jsonDepth + 1);
  });

  it("refuses templates nested deeper than the limit, naming the field and the rule", () => {
    const limit = COMPOSITION_LIMITS.jsonDepth;
    expect(definitionFromInput([step({ args: nested(limit) })], "").steps[0]?.args).toEqual(JSON.parse(nested(limit)));
    const deepArgs = (): unknown => definitionFromInput([step(), step({ id: "s2", args: nested(30_000) })], "");
    expect(deepArgs).toThrow(InvalidArgumentError);
    expect(deepArgs).toThrow(
      /^steps\[1\].args: nests arrays and objects more than 128 levels deep; JSON in a composition nests at most 128 levels$/,
    );
    expect(() => definitionFromInput([step()], nested(limit + 1))).toThrow(/^output: nests arrays and objects more than 128/);
    // A stored file edited by hand into the same shape fails the same way, before anything serializes it.
    const stored = `{"kind": "skill-engine/composed-skill", "steps": [{"id": "a", "skill": "geo", "args": ${nested(30_000)}}]}`;
    expect(() => parseStoredDefinition(stored)).toThrow(/^steps\[0\].args: nests arrays and objects more than 128/);
  });

  it("parses name and name@version references", () => {
    expect(parseSkillRef("geo", "f")).toEqual({ name: "geo" });
    expect(parseSkillRef("geo@12", "f")).toEqual({ name: "geo", version: 12 });
    expect(() => parseSkillRef("no spaces", "f")).toThrow(/not a skill name/);
  });
});
