import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { OnFailure } from "../../gen/skillengine/v1/composition.js";
import { Visibility } from "../../gen/skillengine/v1/skills.js";
import { UsageError } from "./args.js";
import { composeRequest } from "./composition-commands.js";

describe("skillctl compose: the file → RegisterComposedSkillRequest", () => {
  it("turns objects into JSON text, templates into JSON values, and names into enums", () => {
    const request = composeRequest(
      parse(`name: m
description: d
parameters_schema: { type: object }
steps:
  - { id: a, skill: geo, args: { city: "{{params.city}}" } }
  - { id: b, skill: fmt@2, when: steps.a.success, on_failure: continue }
output: "{{steps.b.stdout}}"
test_payload: '{"city": "Oslo"}'
visibility: public
example_queries: [weather]
`),
      "m.yaml",
    );
    expect(request).toEqual({
      onDuplicate: 0,
      name: "m",
      description: "d",
      parametersSchema: '{"type":"object"}',
      steps: [
        { id: "a", skill: "geo", args: '{"city":"{{params.city}}"}', when: "", onFailure: OnFailure.ON_FAILURE_STOP },
        { id: "b", skill: "fmt@2", args: "{}", when: "steps.a.success", onFailure: OnFailure.ON_FAILURE_CONTINUE },
      ],
      output: '"{{steps.b.stdout}}"',
      testPayload: '{"city": "Oslo"}',
      visibility: Visibility.VISIBILITY_PUBLIC,
      exampleQueries: ["weather"],
    });
  });

  it("names the first thing that is wrong", () => {
    expect(() => composeRequest([], "f")).toThrow(UsageError);
    expect(() => composeRequest({ description: "d", steps: [{ id: "a", skill: "b" }] }, "f")).toThrow(/"name" is required/);
    expect(() => composeRequest({ name: "n", description: "d", steps: [{ id: "a" }] }, "f")).toThrow(/steps\[0\] needs id and skill/);
    expect(() => composeRequest({ name: "n", description: "d", steps: [{ id: "a", skill: "b", on_failure: "retry" }] }, "f")).toThrow(
      /on_failure must be stop or continue/,
    );
  });
});
