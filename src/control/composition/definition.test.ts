import { describe, expect, it } from "vitest";
import { definitionFromInput, parseSkillRef, parseStoredDefinition, serializeDefinition, type StepInput } from "./definition.js";

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

  it("parses name and name@version references", () => {
    expect(parseSkillRef("geo", "f")).toEqual({ name: "geo" });
    expect(parseSkillRef("geo@12", "f")).toEqual({ name: "geo", version: 12 });
    expect(() => parseSkillRef("no spaces", "f")).toThrow(/not a skill name/);
  });
});
