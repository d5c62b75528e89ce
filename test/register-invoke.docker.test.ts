import { readFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { rpcError, runsCleanedUp, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { readMirrorSkills } from "./support/registry-mirror.js";

const ADD_CODE = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"sum": args["a"] + args["b"]}))
`;
const ADD_SCHEMA = JSON.stringify({
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
});

describe("RegisterSkill → InvokeSkill through a real server, engine and SQLite file", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("registers a working skill, proves it in a container and persists it canonically", async () => {
    const response = await engine.client.register({
      name: "add_numbers",
      description: "Adds two numbers a and b.",
      parametersSchema: ADD_SCHEMA,
      code: ADD_CODE,
      testPayload: '{"a": 1, "b": 2}',
    });

    expect(response.test).toMatchObject({ exitCode: 0, stdout: '{"sum": 3}\n', success: true, timedOut: false });
    expect(response.skill).toMatchObject({
      name: "add_numbers",
      status: SkillStatus.SKILL_STATUS_ACTIVE,
      version: 1,
      usageCount: 0,
      failureCount: 0,
    });
    expect(response.skill?.contentHash).toMatch(/^[0-9a-f]{64}$/);

    const canonical = path.join(engine.home, "memory", "acquired_skills", "add_numbers.py");
    expect(await readFile(canonical, "utf8")).toBe(ADD_CODE);
    const history = path.join(engine.home, "memory", "acquired_skills", ".versions", "add_numbers", "1.py");
    expect(await readFile(history, "utf8")).toBe(ADD_CODE);
    // The mirror is rewritten just after the reply (docs/performance.md#registration).
    const mirror = await eventually("the mirror to list the skill", async () => {
      const read = await readMirrorSkills(engine.home).catch(() => []);
      return read.length > 0 ? read : undefined;
    });
    expect(mirror).toEqual([
      expect.objectContaining({ name: "add_numbers", status: "active", version: 1, usage_count: 0, failure_count: 0 }),
    ]);
  });

  it("invokes the skill with a payload and returns its output", async () => {
    const { result, version } = await engine.client.invoke("add_numbers", '{"a": 40, "b": 2}');
    expect(version).toBe(1);
    expect(result).toMatchObject({ exitCode: 0, stdout: '{"sum": 42}\n', success: true, errorSummary: "" });
    expect(result?.durationMs).toBeGreaterThan(0);
  });

  it("shows the skill, its active code and its usage in GetSkill and ListSkills", async () => {
    const got = await engine.client.get("add_numbers");
    expect(got.code).toBe(ADD_CODE);
    expect(got.skill).toMatchObject({ name: "add_numbers", usageCount: 1, failureCount: 0, parametersSchema: ADD_SCHEMA });
    expect(got.skill?.lastInvokedAt).toBeInstanceOf(Date);

    const listed = await engine.client.list();
    expect(listed.skills.map((s) => s.name)).toEqual(["add_numbers"]);
  });

  it("re-registering a name creates the next version; a failing re-registration leaves it untouched", async () => {
    const v2 = ADD_CODE.replace('"sum"', '"total"');
    const second = await engine.client.register({
      name: "add_numbers",
      code: v2,
      parametersSchema: ADD_SCHEMA,
      testPayload: '{"a":1,"b":1}',
    });
    expect(second.skill?.version).toBe(2);

    const broken = await rpcError(
      engine.client.register({
        name: "add_numbers",
        code: "raise RuntimeError('nope')",
        parametersSchema: ADD_SCHEMA,
        testPayload: '{"a":1,"b":1}',
      }),
    );
    expect(broken.code).toBe(status.FAILED_PRECONDITION);

    const got = await engine.client.get("add_numbers");
    expect(got.skill?.version).toBe(2);
    expect(got.code).toBe(v2);
    expect((await engine.client.invoke("add_numbers", '{"a":2,"b":2}')).result?.stdout).toBe('{"total": 4}\n');
  });

  it("rejects a skill that raises on its test payload with the one-line cause, and persists nothing", async () => {
    const error = await rpcError(
      engine.client.register({
        name: "parse_int",
        code: "import json, sys\nprint(int(json.loads(sys.argv[1])['value']))\n",
        parametersSchema: '{"type":"object","properties":{"value":{"type":"string"}}}',
        testPayload: '{"value": "x"}',
      }),
    );
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(error.details).toBe("line 2: ValueError: invalid literal for int() with base 10: 'x'");

    expect((await rpcError(engine.client.get("parse_int"))).code).toBe(status.NOT_FOUND);
    const directory = path.join(engine.home, "memory", "acquired_skills");
    await expect(readFile(path.join(directory, "parse_int.py"))).rejects.toMatchObject({ code: "ENOENT" });
    await expect(readFile(path.join(directory, ".versions", "parse_int", "1.py"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("answers NOT_FOUND for an unknown skill and INVALID_ARGUMENT for bad input, naming the field", async () => {
    expect((await rpcError(engine.client.invoke("no_such_skill"))).code).toBe(status.NOT_FOUND);

    const badName = await rpcError(engine.client.register({ name: "../etc/passwd", code: "print(1)" }));
    expect(badName.code).toBe(status.INVALID_ARGUMENT);
    expect(badName.details).toMatch(/^name: /);

    const badSchema = await rpcError(engine.client.register({ name: "ok_name", code: "print(1)", parametersSchema: "{nope" }));
    expect(badSchema.code).toBe(status.INVALID_ARGUMENT);
    expect(badSchema.details).toMatch(/^parameters_schema: is not valid JSON/);

    const invalidSchema = await rpcError(
      engine.client.register({
        name: "ok_name",
        code: "print(1)",
        parametersSchema: '{"type":"object","properties":{"a":{"type":"no-such-type"}}}',
      }),
    );
    expect(invalidSchema.code).toBe(status.INVALID_ARGUMENT);
    expect(invalidSchema.details).toMatch(/^parameters_schema: is not a valid JSON Schema/);

    const badTestPayload = await rpcError(engine.client.register({ name: "ok_name", code: "print(1)", testPayload: "[1," }));
    expect(badTestPayload.details).toMatch(/^test_payload: is not valid JSON/);

    const noDescription = await rpcError(engine.client.register({ name: "ok_name", code: "print(1)", description: "  " }));
    expect(noDescription.details).toMatch(/^description: is required/);

    const noCode = await rpcError(engine.client.register({ name: "ok_name", code: "" }));
    expect(noCode.details).toMatch(/^code: is required/);

    const badPayload = await rpcError(engine.client.invoke("add_numbers", "not json"));
    expect(badPayload.code).toBe(status.INVALID_ARGUMENT);
    expect(badPayload.details).toMatch(/^payload: is not valid JSON/);

    const wrongShape = await rpcError(engine.client.invoke("add_numbers", '{"a": "one"}'));
    expect(wrongShape.code).toBe(status.INVALID_ARGUMENT);
    expect(wrongShape.details).toMatch(/^payload: does not match parameters_schema/);
  });

  it("leaves no container behind", async () => {
    await runsCleanedUp(engine);
  });
});
