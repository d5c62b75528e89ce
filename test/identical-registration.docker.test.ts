import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctl } from "./support/skillctl.js";
import { runsByPath, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * docs/skill-lifecycle.md#identical-registrations through the real service: registering the active
 * version again (same code, same declarations) answers that version, runs no container and makes
 * no version; anything a version stores that differs makes one.
 */
const ADD = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"sum": args["a"] + args["b"]}))
`;
const SCHEMA = '{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}';

describe("an identical registration (real engine, real containers)", () => {
  let engine: TestEngine;
  let work: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    work = await mkdtemp(path.join(os.tmpdir(), "identical-registration-"));
  });
  afterAll(async () => {
    await engine?.dispose();
    if (work) await rm(work, { recursive: true, force: true });
  });

  const testRuns = async (): Promise<number> => {
    const { warm, cold } = await runsByPath(engine, "test");
    return warm + cold;
  };
  const versions = async (name: string): Promise<number[]> =>
    (await engine.client.call(engine.client.raw.listSkillVersions, { name })).versions.map((v) => v.version);
  const register = (overrides: Partial<Parameters<TestEngine["client"]["register"]>[0]> = {}) =>
    engine.client.register(
      { name: "adds", code: ADD, parametersSchema: SCHEMA, testPayload: '{"a": 1, "b": 2}', exampleQueries: ["add numbers"], ...overrides },
      120_000,
    );

  it("answers the existing version, with no test run, no container and no new version", async () => {
    const first = await register();
    expect(first).toMatchObject({ unchanged: false, skill: { name: "adds", version: 1 } });
    expect(first.test?.success).toBe(true);
    const runsAfterFirst = await testRuns();
    expect(runsAfterFirst).toBe(1);

    // The same skill again, its JSON spaced differently and with another example query: the same version.
    const again = await register({
      parametersSchema: JSON.stringify(JSON.parse(SCHEMA), null, 2),
      testPayload: '{ "b": 2, "a": 1 }',
      exampleQueries: ["sum of two numbers"],
    });
    expect(again.unchanged).toBe(true);
    expect(again.test).toBeUndefined();
    expect(again.skill).toMatchObject({ name: "adds", version: 1, latestVersion: 1, contentHash: first.skill?.contentHash });
    expect(again.testFiles).toEqual([]);
    expect(await testRuns()).toBe(runsAfterFirst);
    expect(await versions("adds")).toEqual([1]);
    // The skill is untouched: it still runs as v1.
    expect((await engine.client.invoke("adds", '{"a": 2, "b": 3}')).version).toBe(1);
  });

  it("makes a new version, after its test run, when the code or a declaration differs", async () => {
    const before = await testRuns();
    const described = await register({ description: "Adds a and b." });
    expect(described).toMatchObject({ unchanged: false, skill: { version: 2 } });
    const recoded = await register({ description: "Adds a and b.", code: `${ADD}# v3\n` });
    expect(recoded).toMatchObject({ unchanged: false, skill: { version: 3 } });
    expect(await testRuns()).toBe(before + 2);
    // And the latest, sent again, is unchanged in turn.
    const same = await register({ description: "Adds a and b.", code: `${ADD}# v3\n` });
    expect(same).toMatchObject({ unchanged: true, skill: { version: 3 } });
    expect(await versions("adds")).toEqual([1, 2, 3]);
    expect(await testRuns()).toBe(before + 2);
  });

  it("does the same for a composed skill's definition", async () => {
    const composed = {
      name: "adds_twice",
      description: "Adds a and b, then adds b again.",
      parametersSchema: SCHEMA,
      steps: [
        { id: "first", skill: "adds", args: '{"a": "{{params.a}}", "b": "{{params.b}}"}', when: "", onFailure: 0 },
        { id: "second", skill: "adds", args: '{"a": "{{steps.first.output.sum}}", "b": "{{params.b}}"}', when: "", onFailure: 0 },
      ],
      output: "",
      testPayload: '{"a": 1, "b": 2}',
      visibility: 0,
      exampleQueries: [],
      onDuplicate: 0,
    };
    const first = await engine.client.call(engine.client.raw.registerComposedSkill, composed, 120_000);
    expect(first).toMatchObject({ unchanged: false, skill: { version: 1 } });
    expect(first.test?.success).toBe(true);
    const before = await testRuns();
    const again = await engine.client.call(engine.client.raw.registerComposedSkill, composed, 120_000);
    expect(again).toMatchObject({ unchanged: true, skill: { name: "adds_twice", version: 1 }, steps: [] });
    expect(again.test).toBeUndefined();
    expect(await testRuns()).toBe(before);
    expect(await versions("adds_twice")).toEqual([1]);
  });

  it("skillctl register says so", async () => {
    const file = path.join(work, "adds.py");
    await writeFile(file, `${ADD}# v3\n`);
    const schema = path.join(work, "schema.json");
    await writeFile(schema, SCHEMA);
    const args = [
      "register",
      file,
      "--name",
      "adds",
      "--description",
      "Adds a and b.",
      "--schema",
      schema,
      "--test-payload",
      '{"a": 1, "b": 2}',
    ];
    const run = await skillctl(engine.app.port, ...args);
    expect(run).toMatchObject({ code: 0, stdout: "unchanged: v3 already has this code\n" });
    const json = await skillctl(engine.app.port, "--json", ...args);
    expect(JSON.parse(json.stdout)).toMatchObject({ unchanged: true, skill: { name: "adds", version: 3 } });
    expect(await versions("adds")).toEqual([1, 2, 3]);
  });
});
