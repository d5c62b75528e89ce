/**
 * The fast paths of docs/performance.md, through real components: registration's test runs take
 * the warm pool like invocations; finished runs' containers are removed in the background, stay
 * tracked (the sweep leaves them alone) and are all gone after a graceful stop; routing answers
 * with a skill whose embedding was still being written when its registration returned.
 */
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config/index.js";
import { DockerSandboxRunner } from "../src/execution/index.js";
import { OnFailure } from "../src/gen/skillengine/v1/composition.js";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { eventually } from "./support/poll.js";
import { containersOf, docker, runsByPath, startTestEngine, type TestEngine, warmIdle } from "./support/test-engine.js";

const ECHO = "import json, sys\nprint(json.dumps({'echo': json.loads(sys.argv[1])}))\n";
const IMAGE = process.env.SKILL_ENGINE_IMAGE ?? "skill-engine-sandbox:latest";

/** The test runs `work` made on `engine`, by path, as its /metrics counts them. */
async function testRunsOf(engine: TestEngine, work: () => Promise<unknown>): Promise<{ warm: number; cold: number }> {
  const before = await runsByPath(engine, "test");
  await work();
  const after = await runsByPath(engine, "test");
  return { warm: after.warm - before.warm, cold: after.cold - before.cold };
}

async function poolReady(engine: TestEngine, size: number): Promise<void> {
  await eventually(`the warm pool to hold ${size} waiting containers`, async () => ((await warmIdle(engine)) >= size ? true : undefined), {
    intervalMs: 50,
  });
}

describe("registration takes the warm path (a fresh pooled container, used once)", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2" } });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("RegisterSkill, PatchSkill and RegisterComposedSkill test in a warm container", async () => {
    await poolReady(engine, 2);
    expect(await testRunsOf(engine, () => engine.client.register({ name: "echo", code: ECHO, testPayload: '{"a": 1}' }))).toEqual({
      warm: 1,
      cold: 0,
    });
    await poolReady(engine, 2);
    const patch = () =>
      engine.client.call(engine.client.raw.patchSkill, { name: "echo", find: "'echo'", replace: "'echoed'", testPayload: "" });
    expect(await testRunsOf(engine, patch)).toEqual({ warm: 1, cold: 0 });
    await poolReady(engine, 2);
    const composed = () =>
      engine.client.call(engine.client.raw.registerComposedSkill, {
        name: "echo_twice",
        description: "echoes its input",
        parametersSchema: '{"type": "object"}',
        steps: [{ id: "once", skill: "echo", args: '{"x": 1}', when: "", onFailure: OnFailure.ON_FAILURE_UNSPECIFIED }],
        output: "",
        testPayload: "{}",
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
      });
    expect(await testRunsOf(engine, composed)).toEqual({ warm: 1, cold: 0 });
  });

  it("routes to a skill as soon as its registration has returned, example queries included", async () => {
    await engine.client.register({
      name: "moon_phase",
      code: ECHO,
      description: "tells the phase of the moon for a date",
      exampleQueries: ["is it a full moon tonight"],
    });
    const routed = await engine.client.call(engine.client.raw.routeSkills, {
      query: "is it a full moon tonight",
      limit: 3,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_VECTORS,
    });
    expect(routed.skills[0]?.name).toBe("moon_phase");
  });
});

describe("background container removal", () => {
  let root: string;
  const instanceTag = `removal-${process.pid}`;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-removal-"));
  });
  afterAll(async () => {
    for (const found of await containersOf(instanceTag)) await docker.getContainer(found.Id).remove({ force: true });
    await rm(root, { recursive: true, force: true });
  });

  it("answers before removal, keeps waiting containers tracked (the sweep removes none), and drains on close", async () => {
    const sandboxDir = path.join(root, "sandbox");
    const runner = new DockerSandboxRunner({
      docker,
      logger: pino({ level: "silent" }),
      image: IMAGE,
      runtime: undefined,
      sandboxDir,
      instanceTag,
      limits: loadConfig({}).limits,
      maxConcurrentRuns: 4,
      maxQueuedRuns: 16,
      maxQueuedRunsPerAgent: 16,
      warmPoolSize: 2,
      warmIdleMs: 60_000,
      poolPauseAtRuns: 0,
      // One worker and one waiting: six runs in a burst must pass through the bound.
      removalWorkers: 1,
      maxAwaitingRemoval: 1,
    });
    runner.startPool();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        runner.run({ code: ECHO, payload: JSON.stringify({ i }), purpose: "invoke", skillName: "echo", agentId: "bench" }),
      ),
    );
    for (const [i, result] of results.entries()) expect(JSON.parse(result.stdout)).toEqual({ echo: { i } });
    // Whatever still waits for removal is this process's own: the sweep must leave it alone.
    const reaped = await runner.reapOrphans();
    expect(reaped).toEqual({ containers: 0, runDirectories: 0 });
    await runner.close();
    expect(runner.awaitingRemoval).toBe(0);
    expect(await containersOf(instanceTag)).toEqual([]);
    const leftovers = (await readdir(path.join(sandboxDir, "runs")).catch(() => [])).filter((name) => name.startsWith(instanceTag));
    expect(leftovers).toEqual([]);
  });
});
