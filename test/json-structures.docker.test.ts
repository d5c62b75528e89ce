import { Client, credentials, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { SkillEngineService } from "../src/gen/skillengine/v1/skill_engine.js";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * docs/api.md#json-as-structures through the real service: payloads and schemas sent as
 * google.protobuf.Struct instead of JSON text, and a run's stdout answered parsed as well.
 */
const ECHO = `import json, sys
args = json.loads(sys.argv[1])
if args.get("shape") == "text":
    print("not json")
elif args.get("shape") == "deep":
    print(json.dumps(json.loads("[" * args["depth"] + "]" * args["depth"])))
else:
    print(json.dumps({"got": args, "n": 3, "items": [1, "two", None, True]}))
`;
const SCHEMA = { type: "object", properties: { shape: { type: "string" }, depth: { type: "integer" }, x: { type: "number" } } };

describe("JSON as structures (real engine, real containers)", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  const invoke = (request: { payload?: string; payloadJson?: Record<string, unknown> }) =>
    engine.client.call(engine.client.raw.invokeSkill, {
      name: "echo_json",
      payload: request.payload ?? "",
      payloadJson: request.payloadJson,
      routeId: "",
      files: [],
    });

  it("registers with the schema and the test payload as structures; both forms of one field is INVALID_ARGUMENT", async () => {
    const registered = await engine.client.register(
      {
        name: "echo_json",
        code: ECHO,
        description: "Echoes its payload as JSON.",
        parametersSchema: "",
        parametersSchemaJson: SCHEMA,
        testPayload: "",
        testPayloadJson: { x: 1.5 },
      },
      120_000,
    );
    expect(registered.test?.resultJson).toEqual({ got: { x: 1.5 }, n: 3, items: [1, "two", null, true] });
    expect(registered.skill?.parametersSchemaJson).toEqual(SCHEMA);
    expect(JSON.parse(registered.skill?.parametersSchema ?? "")).toEqual(SCHEMA);

    for (const [field, both] of [
      ["parameters_schema", { parametersSchema: JSON.stringify(SCHEMA), parametersSchemaJson: SCHEMA }],
      ["test_payload", { testPayload: "{}", testPayloadJson: {} }],
    ] as const) {
      const error = await rpcError(engine.client.register({ name: "echo_json", code: ECHO, ...both }));
      expect(error.code).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toBe(`${field}_json: give ${field} or ${field}_json, not both`);
    }
    // The structure is checked like the text: against the schema.
    const off = await rpcError(
      engine.client.register({
        name: "echo_json",
        code: ECHO,
        parametersSchema: "",
        parametersSchemaJson: SCHEMA,
        testPayloadJson: { x: "a" },
        testPayload: "",
      }),
    );
    expect(off.code).toBe(status.INVALID_ARGUMENT);
    expect(off.details).toMatch(/^test_payload: does not match parameters_schema: \/x must be number/);
  });

  it("invokes with payload_json; the result comes parsed in result_json when stdout is JSON", async () => {
    const structured = await invoke({ payloadJson: { x: 2, shape: "json" } });
    expect(structured.result?.success).toBe(true);
    expect(structured.result?.resultJson).toEqual({ got: { x: 2, shape: "json" }, n: 3, items: [1, "two", null, true] });
    // The text form is unchanged, and answers the same structure.
    const text = await invoke({ payload: '{"x": 2, "shape": "json"}' });
    expect(text.result?.resultJson).toEqual(structured.result?.resultJson);
    expect(JSON.parse(text.result?.stdout ?? "")).toEqual(text.result?.resultJson);

    const both = await rpcError(invoke({ payload: "{}", payloadJson: {} }));
    expect(both.code).toBe(status.INVALID_ARGUMENT);
    expect(both.details).toBe("payload_json: give payload or payload_json, not both");
    const off = await rpcError(invoke({ payloadJson: { x: "a" } }));
    expect(off.details).toMatch(/^payload: does not match parameters_schema: \/x must be number/);
  });

  it("decodes a payload_json of up to 33 levels of objects; deeper is INVALID_ARGUMENT, never INTERNAL, even 100,000 deep", async () => {
    const nest = (levels: number): Record<string, unknown> => {
      let nested: Record<string, unknown> = {};
      for (let i = 1; i < levels; i++) nested = { y: nested };
      return nested;
    };
    expect((await invoke({ payloadJson: nest(33) })).result?.success).toBe(true);
    const deep = await rpcError(invoke({ payloadJson: nest(34) }));
    expect(deep.code).toBe(status.INVALID_ARGUMENT);
    expect(deep.details).toBe("request: cannot be decoded as skillengine.v1.InvokeSkillRequest: protobuf decode recursion limit exceeded");

    // 100,000 levels, encoded by hand (a client's encoder would overflow its own stack first).
    const bytes = invokeWithNestedStruct("echo_json", 100_000);
    const refused = await rpcError(
      new Promise((resolve, reject) => {
        const raw = new Client(`127.0.0.1:${engine.app.port}`, credentials.createInsecure());
        raw.makeUnaryRequest(
          SkillEngineService.invokeSkill.path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          bytes,
          (error, response) => {
            raw.close();
            if (error) reject(error);
            else resolve(response);
          },
        );
      }),
    );
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(refused.details).toMatch(/^request: cannot be decoded as skillengine\.v1\.InvokeSkillRequest/);
    expect((await invoke({ payloadJson: { x: 1 } })).result?.success).toBe(true);
  });

  it("leaves result_json out when stdout is no JSON document or nests deeper than 24 levels", async () => {
    const text = await invoke({ payloadJson: { shape: "text" } });
    expect(text.result).toMatchObject({ success: true, stdout: "not json\n" });
    expect(text.result?.resultJson).toBeUndefined();
    const deep = await invoke({ payloadJson: { shape: "deep", depth: 25 } });
    expect(deep.result?.success).toBe(true);
    expect(deep.result?.resultJson).toBeUndefined();
    const deepest = await invoke({ payloadJson: { shape: "deep", depth: 24 } });
    expect(JSON.stringify(deepest.result?.resultJson)).toBe(`${"[".repeat(24)}${"]".repeat(24)}`);
  });

  it("answers schemas and tool definitions as structures too: GetSkill and RouteSkills", async () => {
    expect((await engine.client.get("echo_json")).skill?.parametersSchemaJson).toEqual(SCHEMA);
    const routed = await engine.client.call(engine.client.raw.routeSkills, {
      query: "echo the payload as JSON",
      limit: 5,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      // Keywords alone: no relevance floor to fall under.
      mode: RouteMode.ROUTE_MODE_KEYWORDS,
      hardening: 0,
    });
    const echo = routed.skills.find((s) => s.name === "echo_json");
    expect(echo?.parametersSchemaJson).toEqual(SCHEMA);
    expect(echo?.toolDefinitionJson).toEqual(JSON.parse(echo?.toolDefinition ?? ""));
    expect(echo?.toolDefinitionJson).toMatchObject({ type: "function", function: { name: "echo_json", parameters: SCHEMA } });
  });
});

function varint(n: number): number[] {
  const out: number[] = [];
  while (n > 0x7f) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/**
 * InvokeSkillRequest{name, payload_json} whose Struct nests `levels` deep ({"c": {"c": …}}), as wire
 * bytes: each level is Struct.fields → FieldsEntry{key "c", value} → Value.struct_value → Struct.
 * Sizes are computed from the inside out, then the headers written from the outside in.
 */
function invokeWithNestedStruct(name: string, levels: number): Buffer {
  // structSize[i]: bytes of the Struct i levels from the innermost (0: the empty one).
  const headers: number[][] = [];
  let structSize = 0;
  for (let i = 0; i < levels; i++) {
    const valueHeader = [0x2a, ...varint(structSize)];
    const valueSize = valueHeader.length + structSize;
    const entryHeader = [0x0a, 0x01, 0x63, 0x12, ...varint(valueSize)];
    const entrySize = entryHeader.length + valueSize;
    const structHeader = [0x0a, ...varint(entrySize)];
    headers.push([...structHeader, ...entryHeader, ...valueHeader]);
    structSize = structHeader.length + entrySize;
  }
  const nameBytes = Buffer.from(name, "utf8");
  const top = [0x0a, ...varint(nameBytes.length), ...nameBytes, 0x2a, ...varint(structSize)];
  return Buffer.from([...top, ...headers.reverse().flat()]);
}
