import { describe, expect, it } from "vitest";
import { InvalidArgumentError } from "../../errors/index.js";
import { compileParametersSchema, LIMITS, validateRegistration, validateSkillName } from "./request-validation.js";

const valid = {
  name: "weather_lookup",
  description: "Looks up the weather.",
  parametersSchema: '{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}',
  code: "print('sunny')",
  testPayload: '{"city":"Athens"}',
};

function fieldOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    if (error instanceof InvalidArgumentError) return error.message;
    throw error;
  }
  throw new Error("expected an InvalidArgumentError");
}

describe("validateSkillName", () => {
  it("accepts LLM tool names", () => {
    for (const name of ["a", "_x", "get-weather", "A1_b-2", "x".repeat(64)]) expect(validateSkillName(name)).toBe(name);
  });
  it("rejects names that are not tool names or not safe file names", () => {
    for (const name of ["", "1abc", "-a", "a b", "../x", "a/b", "a.py", "x".repeat(65), "é"]) {
      expect(() => validateSkillName(name)).toThrow(InvalidArgumentError);
    }
  });
});

describe("validateRegistration", () => {
  it("accepts a complete registration and returns a payload validator", () => {
    const result = validateRegistration(valid);
    expect(result.validatePayload("payload", '{"city":"Rome"}')).toBe('{"city":"Rome"}');
  });

  it("reads an empty parameters_schema ({} or nothing) as a tool without parameters, and says so", () => {
    for (const schema of ["{}", "", "  { }\n"]) {
      const result = validateRegistration({ ...valid, parametersSchema: schema, testPayload: "{}" });
      expect(result.parametersSchema).toBe('{"type":"object"}');
      expect(result.normalizations).toEqual([
        expect.stringMatching(/^read parameters_schema .* as \{"type":"object"\}: a tool without parameters$/),
      ]);
      expect(result.validatePayload("payload", '{"anything": 1}')).toBe('{"anything": 1}');
    }
    expect(validateRegistration(valid).normalizations).toEqual([]);
    expect(validateRegistration(valid).parametersSchema).toBe(valid.parametersSchema);
  });

  it("names the field and the reason for each problem", () => {
    expect(fieldOf(() => validateRegistration({ ...valid, description: " " }))).toMatch(/^description: .*required/);
    expect(fieldOf(() => validateRegistration({ ...valid, description: "d".repeat(LIMITS.descriptionChars + 1) }))).toMatch(
      /^description: .*limit is 1024/,
    );
    expect(fieldOf(() => validateRegistration({ ...valid, code: "\n" }))).toMatch(/^code: .*required/);
    expect(fieldOf(() => validateRegistration({ ...valid, code: "x".repeat(LIMITS.codeBytes + 1) }))).toMatch(/^code: .*limit/);
    expect(fieldOf(() => validateRegistration({ ...valid, code: "print(1)\0" }))).toMatch(/^code: .*NUL/);
    expect(fieldOf(() => validateRegistration({ ...valid, parametersSchema: "[]" }))).toMatch(/^parameters_schema: .*JSON object/);
    expect(fieldOf(() => validateRegistration({ ...valid, parametersSchema: '{"type":"string"}' }))).toMatch(
      /^parameters_schema: .*"type": "object"/,
    );
    expect(fieldOf(() => validateRegistration({ ...valid, parametersSchema: '{"type":"object","required":"city"}' }))).toMatch(
      /^parameters_schema: is not a valid JSON Schema/,
    );
    expect(fieldOf(() => validateRegistration({ ...valid, testPayload: "{" }))).toMatch(/^test_payload: is not valid JSON/);
    expect(fieldOf(() => validateRegistration({ ...valid, testPayload: '{"town":"x"}' }))).toMatch(
      /^test_payload: does not match parameters_schema: \(root\) must have required property 'city'/,
    );
  });
});

describe("compileParametersSchema", () => {
  const validate = compileParametersSchema('{"type":"object"}');
  it("treats an empty payload as {}", () => {
    expect(validate("payload", "")).toBe("{}");
  });
  it("bounds the payload size", () => {
    const big = JSON.stringify({ x: "y".repeat(LIMITS.payloadBytes) });
    expect(() => validate("payload", big)).toThrow(/payload: is \d+ bytes; the limit is/);
  });
  it("refuses a payload or a schema nested past the depth limit before the validator walks it", () => {
    const recursive = compileParametersSchema('{"type":"object","properties":{"n":{"$ref":"#"}}}');
    const depth = 10_000;
    const deep = '{"n":'.repeat(depth) + "{}" + "}".repeat(depth);
    expect(() => recursive("payload", deep)).toThrow(/payload: nests arrays and objects more than 128 levels deep/);
    const atLimit = '{"n":'.repeat(LIMITS.jsonDepth - 1) + "{}" + "}".repeat(LIMITS.jsonDepth - 1);
    expect(recursive("payload", atLimit)).toBe(atLimit);
    const deepSchema = '{"type":"object","properties":{"a":' + '{"items":'.repeat(200) + "{}" + "}".repeat(200) + "}}";
    expect(() => compileParametersSchema(deepSchema)).toThrow(/parameters_schema: nests arrays and objects more than 128 levels deep/);
  });
  it("rejects a payload with a raw control character", () => {
    expect(() => validate("payload", '{"a":"\u0000"}')).toThrow(/payload: is not valid JSON/);
  });
  it("compiles a schema with an $id as often as it is registered, each validator on its own", () => {
    const withId = (inner: string) =>
      `{"$schema":"http://json-schema.org/draft-07/schema#","$id":"https://example.com/tool","type":"object",` +
      `"definitions":{"t":{"type":"${inner}"}},"properties":{"a":{"$ref":"#/definitions/t"}}}`;
    const first = compileParametersSchema(withId("string"));
    const second = compileParametersSchema(withId("number"));
    expect(first("payload", '{"a":"x"}')).toBe('{"a":"x"}');
    expect(second("payload", '{"a":1}')).toBe('{"a":1}');
    expect(() => first("payload", '{"a":1}')).toThrow(/\/a must be string/);
    expect(() => second("payload", '{"a":"x"}')).toThrow(/\/a must be number/);
  });
  it("reads a schema that names JSON Schema 2020-12 in that dialect, as MCP clients send it", () => {
    const schema = JSON.stringify({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    });
    const validate = compileParametersSchema(schema);
    expect(validate("payload", '{"name":"Ada","address":{"city":"London"}}')).toBe('{"name":"Ada","address":{"city":"London"}}');
    expect(() => validate("payload", '{"address":{"city":1}}')).toThrow(/\/address\/city must be string/);
    expect(() => validate("payload", '{"other":1}')).toThrow(/must NOT have additional properties/);
    expect(() =>
      compileParametersSchema(
        '{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"a":{"type":"strin"}}}',
      ),
    ).toThrow(/parameters_schema: is not a valid JSON Schema: schema is invalid/);
  });
  it("still checks every schema against the meta-schema", () => {
    expect(() => compileParametersSchema('{"type":"object","properties":{"a":{"type":"strin"}}}')).toThrow(
      /parameters_schema: is not a valid JSON Schema: schema is invalid: .*type/,
    );
  });
});
