import { execFile } from "node:child_process";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CatalogStatus, type ComposedStep, OnFailure, type RegisterComposedSkillRequest } from "../src/gen/skillengine/v1/composition.js";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { eventually } from "./support/poll.js";
import {
  connect,
  containersOf,
  makeDirs,
  rpcError,
  runsByPath,
  startTestEngine,
  type TestEngine,
  warmIdle,
  whileItsContainerRuns,
} from "./support/test-engine.js";

/** Looks a city up: {"city": "Oslo"} → {"lat": 59.9, "city": "Oslo"}; exits 1 for an unknown city. */
const GEO = `import json, sys
args = json.loads(sys.argv[1])
known = {"Oslo": 59.9, "Lima": -12.05}
if args["city"] not in known:
    print("unknown city " + args["city"], file=sys.stderr)
    sys.exit(1)
print(json.dumps({"lat": known[args["city"]], "city": args["city"]}))
`;
/** Says which hemisphere a latitude is in. */
const HEMISPHERE = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"hemisphere": "north" if args["lat"] >= 0 else "south", "lat": args["lat"]}))
`;
/** Echoes its payload with a tag. */
const ECHO = `import json, sys
print(json.dumps({"echo": json.loads(sys.argv[1])}))
`;
const CITY_SCHEMA = JSON.stringify({ type: "object", properties: { city: { type: "string" } }, required: ["city"] });

function step(id: string, skill: string, args: unknown, more: Partial<ComposedStep> = {}): ComposedStep {
  return { id, skill, args: JSON.stringify(args), when: "", onFailure: OnFailure.ON_FAILURE_UNSPECIFIED, ...more };
}

describe("composed skills and dependencies through a real server, engine and SQLite file", () => {
  let engine: TestEngine;
  const composed = (request: Partial<RegisterComposedSkillRequest> & { name: string; steps: ComposedStep[] }) =>
    engine.client.call(engine.client.raw.registerComposedSkill, {
      description: "a composed test skill",
      parametersSchema: CITY_SCHEMA,
      output: "",
      testPayload: '{"city": "Oslo"}',
      visibility: 0,
      exampleQueries: [],
      onDuplicate: 0,
      ...request,
    });
  const deps = (name: string) => engine.client.call(engine.client.raw.getSkillDependencies, { name });

  beforeAll(async () => {
    // A sandbox limit far above any wait here: a step stopped by the call's deadline must be
    // stopped by it, not by the limit (the 10 s default would stop a step that outlives the deadline anyway).
    engine = await startTestEngine({ env: { SKILL_ENGINE_TIMEOUT_MS: "900000" } });
    await engine.client.register({ name: "geo", code: GEO, parametersSchema: CITY_SCHEMA, testPayload: '{"city": "Oslo"}' });
    await engine.client.register({ name: "hemisphere", code: HEMISPHERE, testPayload: '{"lat": 1}' });
    await engine.client.register({ name: "echo", code: ECHO });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("passes a value from step 1 to step 2, each step a full invocation with telemetry", async () => {
    const registered = await composed({
      name: "city_hemisphere",
      steps: [step("geo", "geo", { city: "{{params.city}}" }), step("hemi", "hemisphere", { lat: "{{steps.geo.output.lat}}" })],
    });
    expect(registered.test).toMatchObject({ success: true, stdout: '{"hemisphere": "north", "lat": 59.9}\n' });
    expect(registered.steps.map((s) => [s.id, s.skill, s.version, s.skipped])).toEqual([
      ["geo", "geo", 1, false],
      ["hemi", "hemisphere", 1, false],
    ]);
    expect(registered.skill).toMatchObject({ name: "city_hemisphere", version: 1, status: SkillStatus.SKILL_STATUS_ACTIVE });

    const invoked = await engine.client.invoke("city_hemisphere", '{"city": "Lima"}');
    expect(invoked.result).toMatchObject({ success: true, stdout: '{"hemisphere": "south", "lat": -12.05}\n' });
    expect(invoked.steps.map((s) => s.result?.stdout)).toEqual([
      '{"lat": -12.05, "city": "Lima"}\n',
      '{"hemisphere": "south", "lat": -12.05}\n',
    ]);
    // The test run recorded nothing; the invocation counts for the composition and for each step skill.
    for (const name of ["city_hemisphere", "geo", "hemisphere"]) {
      const stats = await engine.client.call(engine.client.raw.getSkillStats, { name });
      expect(stats.totalInvocations, name).toBe(1);
    }

    const got = await engine.client.get("city_hemisphere");
    expect(got.composed).toBe(true);
    expect(got.dependsOn).toEqual(["geo", "hemisphere"]);
    expect(JSON.parse(got.code)).toMatchObject({ kind: "skill-engine/composed-skill", steps: [{ id: "geo" }, { id: "hemi" }] });
    // The canonical store holds the definition, so the directory alone rebuilds the composition.
    expect(await readFile(path.join(engine.home, "memory", "acquired_skills", "city_hemisphere.py"), "utf8")).toBe(got.code);

    // Routing treats it like any skill: its tool definition is its parameters schema.
    const routed = await engine.client.call(engine.client.raw.routeSkills, {
      query: "composed test skill",
      limit: 10,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_KEYWORDS,
    });
    const tool = routed.skills.find((s) => s.name === "city_hemisphere");
    expect(tool?.parametersSchema).toBe(CITY_SCHEMA);
  });

  it("gives the whole composition one deadline: a step still running when it passes is stopped", async () => {
    await engine.client.register({
      name: "sleepy",
      code: `import json, sys, time
time.sleep(json.loads(sys.argv[1])["s"])
print("slept")
`,
      testPayload: '{"s": 0}',
    });
    await composed({
      name: "slow_chain",
      parametersSchema: JSON.stringify({ type: "object", properties: { s: { type: "number" } } }),
      steps: [
        step("a", "sleepy", { s: "{{params.s}}" }),
        step("b", "sleepy", { s: "{{params.s}}" }),
        step("c", "sleepy", { s: "{{params.s}}" }),
      ],
      testPayload: '{"s": 0}',
    });
    // The first step sleeps 600 s, well within the sandbox limit: only the call's deadline can stop
    // it. The deadline leaves a loaded machine ample time to start the step's container first.
    const { call } = await whileItsContainerRuns(engine.instanceTag, () => engine.client.invoke("slow_chain", '{"s": 600}', 15_000));
    const late = await rpcError(call);
    expect(late.code).toBe(status.DEADLINE_EXCEEDED);
    // The server stops the running step and removes its container, long before its sleep ends (a
    // composition that ran its steps without the call's signal would keep it for 600 s), and
    // starts no further step.
    await eventually(
      "the running step's container removed, and no other of the composition left",
      async () => ((await containersOf(engine.instanceTag)).length === 0 ? true : undefined),
      { timeoutMs: 90_000 },
    );
    const stats = await engine.client.call(engine.client.raw.getSkillStats, { name: "sleepy" });
    expect(stats.totalInvocations).toBe(0);
  }, 180_000);

  it("takes a branch and skips another by their conditions; the output template shapes the result", async () => {
    await composed({
      name: "branchy",
      parametersSchema: JSON.stringify({ type: "object", properties: { city: { type: "string" }, loud: { type: "boolean" } } }),
      steps: [
        step("geo", "geo", { city: "{{params.city}}" }),
        step("north", "echo", { text: "north of the equator: {{params.city}}" }, { when: "steps.geo.output.lat >= 0" }),
        step("south", "echo", { text: "south of the equator: {{params.city}}" }, { when: "steps.geo.output.lat < 0" }),
        step("shout", "echo", { text: "LOUD" }, { when: "params.loud = true" }),
      ],
      output: JSON.stringify({ lat: "{{steps.geo.output.lat}}", said: "{{steps.north.output.echo.text}}" }),
    });
    const invoked = await engine.client.invoke("branchy", '{"city": "Oslo", "loud": false}');
    expect(invoked.steps.map((s) => [s.id, s.skipped])).toEqual([
      ["geo", false],
      ["north", false],
      ["south", true],
      ["shout", true],
    ]);
    expect(invoked.steps[2]?.result).toBeUndefined();
    expect(invoked.result).toMatchObject({ success: true, stdout: '{"lat":59.9,"said":"north of the equator: Oslo"}\n' });
  });

  it("stops at a failed step by default, and goes on past one marked continue", async () => {
    await composed({
      name: "stopper",
      steps: [step("geo", "geo", { city: "{{params.city}}" }), step("after", "echo", { ok: true })],
    });
    const stopped = await engine.client.invoke("stopper", '{"city": "Atlantis"}');
    expect(stopped.steps.map((s) => s.id)).toEqual(["geo"]);
    expect(stopped.result).toMatchObject({ success: false, exitCode: 1 });
    expect(stopped.result?.errorSummary).toBe('step "geo" (geo) failed: unknown city Atlantis');

    await composed({
      name: "continuer",
      steps: [
        step("geo", "geo", { city: "{{params.city}}" }, { onFailure: OnFailure.ON_FAILURE_CONTINUE }),
        step("report", "echo", { geo_exit: "{{steps.geo.exit_code}}", geo_ok: "{{steps.geo.success}}" }),
      ],
    });
    const continued = await engine.client.invoke("continuer", '{"city": "Atlantis"}');
    expect(continued.steps.map((s) => [s.id, s.result?.success])).toEqual([
      ["geo", false],
      ["report", true],
    ]);
    expect(continued.result).toMatchObject({ success: true, stdout: '{"echo": {"geo_exit": 1, "geo_ok": false}}\n' });
  });

  it("fails a step whose template names a missing field, naming the step and the field", async () => {
    await composed({
      name: "missing_field",
      steps: [step("geo", "geo", { city: "{{params.city}}" }), step("use", "echo", { alt: "{{steps.geo.output.altitude}}" })],
      testPayload: '{"city": "Oslo"}',
      // The test run would fail, so the composition would never be registered: prove it.
    }).then(
      () => expect.unreachable("registration must fail its test run"),
      (error: { code: number; details: string }) => {
        expect(error.code).toBe(status.FAILED_PRECONDITION);
        expect(error.details).toBe('step "use" (echo) failed: {{steps.geo.output.altitude}}: steps.geo.output has no field "altitude"');
      },
    );
    expect((await engine.client.list()).skills.map((s) => s.name)).not.toContain("missing_field");
  });

  it("refuses in the pre-flight, before anything runs: unknown skills, later steps, undeclared params, bad conditions", async () => {
    const unknown = await rpcError(composed({ name: "bad1", steps: [step("x", "no_such_skill", {})] }));
    expect(unknown.code).toBe(status.FAILED_PRECONDITION);
    expect(unknown.details).toBe('steps[0] (x): no skill named "no_such_skill" is registered');
    const later = await rpcError(
      composed({ name: "bad2", steps: [step("a", "echo", { v: "{{steps.b.stdout}}" }), step("b", "echo", {})] }),
    );
    expect(later.code).toBe(status.INVALID_ARGUMENT);
    expect(later.details).toMatch(/^steps\[0\].args: \{\{steps.b.stdout\}\} reads step "b", which is not an earlier step/);
    const undeclared = await rpcError(composed({ name: "bad3", steps: [step("a", "echo", { v: "{{params.country}}" })] }));
    expect(undeclared.details).toMatch(/reads params.country, which parameters_schema does not declare/);
    const condition = await rpcError(composed({ name: "bad4", steps: [step("a", "echo", {}, { when: "params.city =" })] }));
    expect(condition.code).toBe(status.INVALID_ARGUMENT);
    expect(condition.details).toMatch(/^steps\[0\].when: does not parse/);
  });

  it("refuses a cycle between composed skills, naming it", async () => {
    await composed({ name: "ring_b", steps: [step("e", "echo", { v: 1 })] });
    await composed({ name: "ring_a", steps: [step("b", "ring_b", { city: "{{params.city}}" })] });
    const cycle = await rpcError(composed({ name: "ring_b", steps: [step("a", "ring_a", { city: "{{params.city}}" })] }));
    expect(cycle.code).toBe(status.INVALID_ARGUMENT);
    expect(cycle.details).toBe("steps: would close a dependency cycle: ring_b → ring_a → ring_b");
  });

  it("refuses a composed skill that nests composed skills deeper than SKILL_ENGINE_COMPOSITION_MAX_DEPTH (4), naming the depth", async () => {
    // A composition of plain skills has depth 1; each composed skill over the one before adds one.
    await composed({ name: "nest_1", steps: [step("e", "echo", { v: 1 })] });
    for (const level of [2, 3, 4]) {
      const registered = await composed({ name: `nest_${level}`, steps: [step("s", `nest_${level - 1}`, { city: "{{params.city}}" })] });
      expect(registered.test?.stdout).toBe('{"echo": {"v": 1}}\n');
    }
    const tooDeep = await rpcError(composed({ name: "nest_5", steps: [step("s", "nest_4", { city: "{{params.city}}" })] }));
    expect(tooDeep.code).toBe(status.INVALID_ARGUMENT);
    expect(tooDeep.details).toBe("steps: nests composed skills 5 deep; the limit is 4 (SKILL_ENGINE_COMPOSITION_MAX_DEPTH)");
    expect((await rpcError(engine.client.get("nest_5"))).code).toBe(status.NOT_FOUND);
  });

  it("places a plain skill's dependency read-only beside it: it imports the function and sees no other skill", async () => {
    await engine.client.register({
      name: "mathlib",
      code: `def double(x):\n    return 2 * x\n\nif __name__ == "__main__":\n    print("mathlib")\n`,
    });
    const user = `import json, os, sys
import mathlib
args = json.loads(sys.argv[1])
print(json.dumps({"doubled": mathlib.double(args["n"]), "files": sorted(os.listdir("/sandbox"))}))
`;
    const registered = await engine.client.register({ name: "uses_math", code: user, testPayload: '{"n": 2}', dependsOn: ["mathlib"] });
    expect(JSON.parse(registered.test?.stdout ?? "")).toEqual({ doubled: 4, files: ["mathlib.py", "out", "skill.py"] });
    const invoked = await engine.client.invoke("uses_math", '{"n": 21}');
    expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ doubled: 42, files: ["mathlib.py", "out", "skill.py"] });
    // Read-only: the dependency cannot be changed from inside the sandbox.
    await engine.client.register({
      name: "tamper",
      code: `import sys\ntry:\n    open("/sandbox/mathlib.py", "w").write("x")\n    print("wrote")\nexcept OSError as e:\n    print("refused", type(e).__name__)\n`,
      dependsOn: ["mathlib"],
    });
    expect((await engine.client.invoke("tamper")).result?.stdout).toMatch(/^refused /);

    const report = await deps("mathlib");
    expect(report.dependents).toEqual(["tamper", "uses_math"]);
    expect(await deps("uses_math")).toMatchObject({ dependsOn: ["mathlib"], loadOrder: ["mathlib", "uses_math"], warnings: [] });

    const unknown = await rpcError(engine.client.register({ name: "uses_ghost", code: user, dependsOn: ["ghost"] }));
    expect(unknown.code).toBe(status.FAILED_PRECONDITION);
    expect(unknown.details).toBe('depends_on[0]: no skill named "ghost" is registered');
  });

  it("refuses a cycle between plain skills, naming it", async () => {
    await engine.client.register({ name: "p_a", code: `def f():\n    return 1\nprint("a")\n` });
    await engine.client.register({ name: "p_b", code: `import p_a\nprint(p_a.f())\n`, dependsOn: ["p_a"] });
    const cycle = await rpcError(engine.client.register({ name: "p_a", code: `print("a2")\n`, dependsOn: ["p_b"] }));
    expect(cycle.code).toBe(status.INVALID_ARGUMENT);
    expect(cycle.details).toBe("depends_on: would close a dependency cycle: p_a → p_b → p_a");
  });

  it("refuses to delete a skill others depend on, then deletes it with force and blocks its dependents", async () => {
    await engine.client.register({ name: "base_lib", code: `VALUE = 7\nif __name__ == "__main__":\n    print(VALUE)\n` });
    await engine.client.register({ name: "needs_base", code: `import base_lib\nprint(base_lib.VALUE)\n`, dependsOn: ["base_lib"] });
    await composed({ name: "uses_base", steps: [step("b", "base_lib", {})] });

    const refused = await rpcError(engine.client.call(engine.client.raw.deleteSkill, { name: "base_lib", force: false }));
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(/^cannot delete "base_lib": needs_base, uses_base depend on it/);
    expect((await engine.client.get("base_lib")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);

    const forced = await engine.client.call(engine.client.raw.deleteSkill, { name: "base_lib", force: true });
    expect(forced.skill?.status).toBe(SkillStatus.SKILL_STATUS_DELETED);
    const plain = await rpcError(engine.client.invoke("needs_base"));
    expect(plain.code).toBe(status.FAILED_PRECONDITION);
    expect(plain.details).toMatch(/^cannot run "needs_base": its dependency: "base_lib" is deleted/);
    const viaStep = await rpcError(engine.client.invoke("uses_base", '{"city": "Oslo"}'));
    expect(viaStep.code).toBe(status.FAILED_PRECONDITION);
    expect(viaStep.details).toMatch(/^cannot run "uses_base": its step skill: "base_lib" is deleted/);
    expect((await deps("needs_base")).warnings).toEqual(["missing dependency base_lib (deleted)"]);

    const catalog = await engine.client.call(engine.client.raw.getCatalog, {});
    const entry = (name: string) => catalog.skills.find((s) => s.name === name);
    expect(entry("needs_base")).toMatchObject({
      status: CatalogStatus.CATALOG_STATUS_BLOCKED,
      blockedBy: ["base_lib (deleted)"],
      kind: "plain",
    });
    expect(entry("uses_base")).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_BLOCKED, kind: "composed" });
    expect(entry("base_lib")).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_INACTIVE });
    expect(entry("geo")).toMatchObject({ status: CatalogStatus.CATALOG_STATUS_READY });

    await engine.client.call(engine.client.raw.restoreSkill, { name: "base_lib" });
    expect((await engine.client.invoke("needs_base")).result?.stdout).toBe("7\n");
  });

  it("re-tests unpinned dependents against a new version of their dependency and reports a failing one", async () => {
    await engine.client.register({
      name: "units",
      code: `def km(m):\n    return m / 1000\nif __name__ == "__main__":\n    print("units")\n`,
    });
    await engine.client.register({ name: "dist_ok", code: `import units\nprint(units.km(5000))\n`, dependsOn: ["units"] });
    await engine.client.register({ name: "dist_pinned", code: `import units\nprint(units.km(5000))\n`, dependsOn: ["units@1"] });
    await engine.client.register({
      name: "dist_strict",
      code: `import units\nassert units.km(5000) == 5.0\nprint("ok")\n`,
      dependsOn: ["units"],
    });
    await composed({
      name: "via_strict",
      steps: [step("s", "dist_strict", {}, { onFailure: OnFailure.ON_FAILURE_CONTINUE }), step("e", "echo", {})],
    });

    // v2 changes the unit; dist_ok still prints something, dist_strict's assertion fails; the pinned one is not re-tested.
    const v2 = await engine.client.register({
      name: "units",
      code: `def km(m):\n    return m\nif __name__ == "__main__":\n    print("units")\n`,
    });
    expect(v2.skill?.version).toBe(2);
    expect(v2.dependentsRetested.map((r) => [r.name, r.passed])).toEqual([
      ["dist_ok", true],
      ["dist_strict", false],
    ]);
    expect(v2.dependentsRetested[1]?.error).toMatch(/AssertionError/);

    const strict = await engine.client.invoke("dist_strict");
    expect(strict.warnings).toEqual([
      expect.stringMatching(/^the stored test of "dist_strict" failed against "units" v2: .*AssertionError/),
    ]);
    expect((await engine.client.invoke("dist_ok")).warnings).toEqual([]);
    // A composition running the broken dependent as a step carries the same warning.
    expect((await engine.client.invoke("via_strict", '{"city": "Oslo"}')).warnings).toEqual(strict.warnings);
    // The pinned dependent still runs against v1.
    expect((await engine.client.invoke("dist_pinned")).result?.stdout).toBe("5.0\n");
  });

  it("keeps a degraded skill that others depend on out of the retirement sweep unless forced", async () => {
    await engine.client.register({
      name: "shaky_lib",
      code: `import json, sys
if json.loads(sys.argv[1]).get("fail"):
    sys.exit(3)
print("fine")
`,
    });
    await engine.client.register({ name: "on_shaky", code: `import shaky_lib\nprint("ok")\n`, dependsOn: ["shaky_lib"] });
    for (let i = 0; i < 3; i++) await engine.client.invoke("shaky_lib", '{"fail": true}');

    const kept = await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(kept.retired.map((r) => r.name)).not.toContain("shaky_lib");
    expect(kept.kept.find((k) => k.name === "shaky_lib")?.reasons).toContain("kept: on_shaky depends on it (force retires it anyway)");
    expect((await engine.client.get("shaky_lib")).skill?.status).not.toBe(SkillStatus.SKILL_STATUS_RETIRED);

    const forced = await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: false, force: true });
    expect(forced.retired.map((r) => r.name)).toContain("shaky_lib");
    const blocked = await rpcError(engine.client.invoke("on_shaky"));
    expect(blocked.details).toMatch(/^cannot run "on_shaky": its dependency: "shaky_lib" is retired/);
  });
});

describe("with the warm pool on", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2" } });
    await engine.client.register({ name: "echo", code: ECHO });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("a warm container gets the dependency files too", async () => {
    await engine.client.register({
      name: "warm_lib",
      code: `def hello():\n    return "hello from warm_lib"\n` + `if __name__ == "__main__":\n    print(hello())\n`,
    });
    await engine.client.register({
      name: "warm_user",
      code: `import os, warm_lib\nprint(warm_lib.hello(), sorted(os.listdir("/sandbox")))\n`,
      dependsOn: ["warm_lib"],
    });
    // The registrations' test runs took warm containers: wait for the pool to hold one again, so
    // the invocation is known to take the warm path (not a guess about refill timing).
    await eventually("a waiting warm container", async () => ((await warmIdle(engine)) >= 1 ? true : undefined));
    const before = await runsByPath(engine);
    const invoked = await engine.client.invoke("warm_user");
    expect(invoked.result?.stdout).toBe("hello from warm_lib ['out', 'skill.py', 'warm_lib.py']\n");
    expect((await runsByPath(engine)).warm).toBe(before.warm + 1);
  });

  it("registering the 51st composed skill evicts the least used one, retired with reason evicted and restorable", async () => {
    const register = (name: string) =>
      engine.client.call(engine.client.raw.registerComposedSkill, {
        name,
        description: `composition ${name}`,
        parametersSchema: '{"type":"object"}',
        steps: [step("e", "echo", { from: name })],
        output: "",
        testPayload: "{}",
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
      });
    const macro = (i: number) => `macro_${String(i).padStart(2, "0")}`;
    for (let i = 0; i < 49; i++) expect((await register(macro(i))).evicted).toEqual([]);
    // The 50th uses macro_07 as a step: macro_07 is then never evicted, however little it is used.
    const user = await engine.client.call(engine.client.raw.registerComposedSkill, {
      name: "uses_07",
      description: "runs macro_07",
      parametersSchema: '{"type":"object"}',
      steps: [step("m", "macro_07", {})],
      output: "",
      testPayload: "{}",
      visibility: 0,
      exampleQueries: [],
      onDuplicate: 0,
    });
    expect(user.evicted).toEqual([]);
    // Every macro but 07 and 11 is used once; of the unused ones macro_07 is the oldest but depended on,
    // so macro_11 is the least used that may go (uses_07, never used either, is younger).
    for (let i = 0; i < 49; i++) {
      if (i !== 7 && i !== 11) await engine.client.invoke(macro(i));
    }
    const fiftyFirst = await register("macro_50");
    expect(fiftyFirst.evicted).toEqual(["macro_11"]);
    const evicted = (await engine.client.get("macro_11")).skill;
    expect(evicted).toMatchObject({ status: SkillStatus.SKILL_STATUS_RETIRED });
    expect(evicted?.statusReason).toMatch(/^evicted: local keeps at most 50 composed skills/);
    expect((await engine.client.get("macro_07")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    // Restorable like any retired skill.
    await engine.client.call(engine.client.raw.restoreSkill, { name: "macro_11" });
    expect((await engine.client.invoke("macro_11")).result?.stdout).toBe('{"echo": {"from": "macro_11"}}\n');
    // About a hundred sandbox runs: more time than the suite's default on a busy machine.
  }, 300_000);
});

describe("composition and dependencies respect who may see what", () => {
  const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01" };
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}` } });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("another agent's private skill cannot be a step or a dependency; a public one can", async () => {
    const alice = connect(engine.app.port, TOKENS.alice);
    const bob = connect(engine.app.port, TOKENS.bob);
    try {
      await alice.register({ name: "alice_secret", code: ECHO });
      const request = {
        name: "bob_macro",
        description: "uses alice's skill",
        parametersSchema: '{"type":"object"}',
        steps: [step("s", "alice_secret", {})],
        output: "",
        testPayload: "{}",
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
      };
      const hidden = await rpcError(bob.call(bob.raw.registerComposedSkill, request));
      expect(hidden.code).toBe(status.FAILED_PRECONDITION);
      expect(hidden.details).toBe('steps[0] (s): no skill named "alice_secret" is registered');
      const notImportable = await rpcError(bob.register({ name: "bob_lib_user", code: ECHO, dependsOn: ["alice_secret"] }));
      expect(notImportable.details).toBe('depends_on[0]: no skill named "alice_secret" is registered');

      await alice.call(alice.raw.setSkillVisibility, { name: "alice_secret", visibility: 2 });
      expect((await bob.call(bob.raw.registerComposedSkill, request)).test?.success).toBe(true);
      // Alice sees who depends on her skill only where she may see the dependent.
      expect((await alice.call(alice.raw.getSkillDependencies, { name: "alice_secret" })).dependents).toEqual([]);
    } finally {
      alice.close();
      bob.close();
    }
  });
});

describe("the canonical directory alone rebuilds compositions and dependency declarations", () => {
  it("after registry.db is lost and rebuilt, a composed skill and a plain skill's dependency work as before", async () => {
    const dirs = await makeDirs();
    const original = await startTestEngine({ dirs });
    try {
      await original.client.register({
        name: "lib",
        code: `def f():\n    return "from lib"\nif __name__ == "__main__":\n    print(f())\n`,
      });
      await original.client.register({ name: "app", code: `import lib\nprint(lib.f())\n`, dependsOn: ["lib"] });
      await original.client.call(original.client.raw.registerComposedSkill, {
        name: "twice",
        description: "runs app twice",
        parametersSchema: '{"type":"object"}',
        steps: [step("one", "app", {}), step("two", "app", {})],
        output: JSON.stringify("{{steps.one.stdout}}{{steps.two.stdout}}"),
        testPayload: "{}",
        visibility: 0,
        exampleQueries: [],
        onDuplicate: 0,
      });
    } finally {
      await original.stop();
    }
    for (const file of ["registry.db", "registry.db-wal", "registry.db-shm"]) await rm(path.join(dirs.home, file), { force: true });
    await promisify(execFile)(process.execPath, ["--import", "tsx", "src/cli/rebuild-registry.ts"], {
      cwd: fileURLToPath(new URL("..", import.meta.url)),
      env: { ...process.env, SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir },
    });
    const rebuilt = await startTestEngine({ dirs });
    try {
      expect((await rebuilt.client.get("twice")).composed).toBe(true);
      expect((await rebuilt.client.get("app")).dependsOn).toEqual(["lib"]);
      expect((await rebuilt.client.invoke("twice")).result?.stdout).toBe("from lib\nfrom lib\n");
      const refused = await rpcError(rebuilt.client.call(rebuilt.client.raw.deleteSkill, { name: "lib", force: false }));
      expect(refused.details).toMatch(/app depends on it/);
    } finally {
      await rebuilt.dispose();
    }
  });
});

describe("mandatory skills", () => {
  it("a missing mandatory skill stops the start with its name; once registered, the service starts", async () => {
    const dirs = await makeDirs();
    const first = await startTestEngine({ dirs });
    await first.client.register({ name: "policy", code: `print("ok")\n` });
    await first.stop();

    await expect(startTestEngine({ dirs, env: { SKILL_ENGINE_MANDATORY_SKILLS: "policy,bouncer" } })).rejects.toThrow(
      'boot failure: mandatory skill "bouncer" is not registered (SKILL_ENGINE_MANDATORY_SKILLS)',
    );
    const second = await startTestEngine({ dirs, env: { SKILL_ENGINE_MANDATORY_SKILLS: "policy" } });
    try {
      expect((await second.client.invoke("policy")).result?.stdout).toBe("ok\n");
    } finally {
      await second.dispose();
    }
    expect(await readdir(dirs.root).catch(() => [])).toEqual([]);
  });
});
