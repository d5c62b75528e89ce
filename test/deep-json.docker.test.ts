import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** A schema that refers to itself: its validator walks a payload by recursion, one call a level. */
const RECURSIVE_SCHEMA = JSON.stringify({ type: "object", properties: { child: { $ref: "#" } } });
const ECHO_CODE = `import json, sys
print(json.dumps({"ok": True}))
`;

describe("JSON nested past the depth limit is INVALID_ARGUMENT, never INTERNAL (docs/skill-lifecycle.md#input-limits)", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
    await engine.client.register({
      name: "tree_walker",
      description: "Reads a tree of nested children and says ok.",
      parametersSchema: RECURSIVE_SCHEMA,
      code: ECHO_CODE,
      testPayload: '{"child": {"child": {}}}',
    });
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("refuses a 6,000-level payload (60 KB, under the size limit) naming the rule, and still answers afterwards", async () => {
    const depth = 6_000;
    const payload = '{"child":'.repeat(depth) + "{}" + "}".repeat(depth);
    const refused = await rpcError(engine.client.invoke("tree_walker", payload));
    expect(refused.code).toBe(status.INVALID_ARGUMENT);
    expect(refused.details).toMatch(/^payload: nests arrays and objects more than 128 levels deep; the limit is 128$/);
    const fine = await engine.client.invoke("tree_walker", '{"child": {"child": {}}}');
    expect(fine.result?.success).toBe(true);
  });

  it("refuses a test payload and a schema nested past the limit at registration", async () => {
    const deepTest = await rpcError(
      engine.client.register({
        name: "tree_walker_two",
        description: "Reads a tree of nested children and says ok, again.",
        parametersSchema: RECURSIVE_SCHEMA,
        code: ECHO_CODE,
        testPayload: '{"child":'.repeat(5_000) + "{}" + "}".repeat(5_000),
      }),
    );
    expect(deepTest.code).toBe(status.INVALID_ARGUMENT);
    expect(deepTest.details).toMatch(/^test_payload: nests arrays and objects more than 128 levels deep/);
    const deepSchema = await rpcError(
      engine.client.register({
        name: "tree_walker_three",
        description: "Reads a deep schema.",
        parametersSchema: '{"type":"object","properties":{"a":' + '{"items":'.repeat(5_000) + "{}" + "}".repeat(5_000) + "}}",
        code: ECHO_CODE,
        testPayload: "{}",
      }),
    );
    expect(deepSchema.code).toBe(status.INVALID_ARGUMENT);
    expect(deepSchema.details).toMatch(/^parameters_schema: nests arrays and objects more than 128 levels deep/);
  });
});
