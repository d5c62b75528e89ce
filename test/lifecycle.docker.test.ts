import { access, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkillStatus } from "../src/gen/skillengine/v1/skills.js";
import { eventually } from "./support/poll.js";
import { containersOf, rpcError, runsCleanedUp, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** Succeeds unless the payload says {"fail": true}: outcomes are under the test's control. */
const FLAKY = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print(json.dumps({"ok": True, "tag": "v1"}))
`;
const SCHEMA = '{"type":"object","properties":{"fail":{"type":"boolean"}}}';
const ok = '{"fail": false}';
const bad = '{"fail": true}';

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

describe("skill lifecycle through gRPC (real engine, real SQLite, real files)", () => {
  let engine: TestEngine;
  let skills: string;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_WINDOW_SIZE: "10", SKILL_ENGINE_MAX_CONCURRENT_RUNS: "4" } });
    skills = path.join(engine.home, "memory", "acquired_skills");
  });
  afterAll(async () => {
    await engine.dispose();
  });

  const register = (name: string, code = FLAKY) => engine.client.register({ name, code, parametersSchema: SCHEMA, testPayload: ok });
  const invoke = (name: string, payload: string) => engine.client.invoke(name, payload);
  const skillOf = async (name: string) => (await engine.client.get(name)).skill;

  it("2 consecutive failures keep a skill active, the 3rd degrades it, a success makes it active again", async () => {
    await register("streak");
    await invoke("streak", bad);
    await invoke("streak", bad);
    expect(await skillOf("streak")).toMatchObject({ status: SkillStatus.SKILL_STATUS_ACTIVE, failureCount: 2 });
    const third = await invoke("streak", bad);
    expect(third.result).toMatchObject({ success: false, errorSummary: "line 4: RuntimeError: asked to fail" });
    expect(await skillOf("streak")).toMatchObject({
      status: SkillStatus.SKILL_STATUS_DEGRADED,
      failureCount: 3,
      statusReason: "3 consecutive failed invocations",
    });
    await invoke("streak", ok);
    expect(await skillOf("streak")).toMatchObject({ status: SkillStatus.SKILL_STATUS_ACTIVE, failureCount: 0, usageCount: 1 });
  });

  it("deprecates below 30% over the window, warns below 40%, and a protected pin exempts it", async () => {
    await register("windowed");
    await register("pinned");
    await engine.client.call(engine.client.raw.setSkillProtected, { name: "pinned", protected: true });
    // 10-invocation window: 3 successes then 7 failures → 30% (kept), one more failure → 2/10 = 20%.
    const pattern = [ok, ok, ok, bad, bad, bad, bad, bad, bad, bad];
    for (const payload of pattern) {
      await Promise.all([invoke("windowed", payload), invoke("pinned", payload)]);
    }
    expect(await skillOf("windowed")).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEGRADED });
    expect((await skillOf("windowed"))?.warning).toBe("low reliability: success rate 30% over the last 10 invocations is below 40%");
    await Promise.all([invoke("windowed", bad), invoke("pinned", bad)]);
    expect(await skillOf("windowed")).toMatchObject({
      status: SkillStatus.SKILL_STATUS_DEPRECATED,
      statusReason: "success rate 20% over the last 10 invocations is below 30%",
    });
    const pinned = await skillOf("pinned");
    expect(pinned).toMatchObject({ status: SkillStatus.SKILL_STATUS_DEGRADED, protected: true });
    expect(pinned?.warning).toMatch(/below 40%/);

    // Deprecated skills stay invocable by name and stay on disk.
    expect((await invoke("windowed", ok)).result?.success).toBe(true);
    expect(await exists(path.join(skills, "windowed.py"))).toBe(true);

    const stats = await engine.client.call(engine.client.raw.getSkillStats, { name: "windowed" });
    // Window of the last 10: ok, 7 × bad, bad, ok.
    expect(stats).toMatchObject({ name: "windowed", version: 1, autoCreated: false, windowSamples: 10, windowSuccesses: 2 });
    expect(stats.hasSuccessRate).toBe(true);
    expect(stats.successRate).toBeCloseTo(0.2);
    expect(stats.totalInvocations).toBe(12);
    expect(stats.invocationVelocity7d).toBeCloseTo(12 / 7);
    expect(stats.p95DurationMs).toBeGreaterThanOrEqual(stats.p50DurationMs);
    // Registered moments ago, in this test.
    expect(stats.ageDays).toBeGreaterThan(0);
    expect(stats.ageDays).toBeLessThan(1 / 24);
  });

  it("retires by the retirement rule (skipping protected skills), and restores: retire → restore round trip", async () => {
    await register("doomed");
    for (let i = 0; i < 3; i++) await invoke("doomed", bad);
    const dry = await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: true, force: false });
    expect(dry.retired.map((r) => r.name)).toContain("doomed");
    expect(await exists(path.join(skills, "doomed.py"))).toBe(true);

    const { retired } = await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect(retired).toContainEqual({ name: "doomed", reasons: ["failure_count 3 ≥ 3"] });
    expect(retired.map((r) => r.name)).not.toContain("pinned");
    expect(await exists(path.join(skills, "doomed.py"))).toBe(false);
    expect(await readFile(path.join(skills, "retired", "doomed.py"), "utf8")).toBe(FLAKY);
    expect(await exists(path.join(skills, "retired", ".versions", "doomed", "1.py"))).toBe(true);
    expect((await engine.client.list()).skills.map((s) => s.name)).not.toContain("doomed");
    expect((await engine.client.list(true)).skills.map((s) => s.name)).toContain("doomed");
    const refused = await rpcError(invoke("doomed", ok));
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(/is retired \(failure_count 3 ≥ 3\); RestoreSkill brings it back/);

    const restored = await engine.client.call(engine.client.raw.restoreSkill, { name: "doomed" });
    expect(restored.skill).toMatchObject({ status: SkillStatus.SKILL_STATUS_ACTIVE, failureCount: 0 });
    expect(await readFile(path.join(skills, "doomed.py"), "utf8")).toBe(FLAKY);
    expect((await invoke("doomed", ok)).result?.success).toBe(true);
  });

  it("patches by exact find/replace into a new version through the test gate; a failing patch changes nothing", async () => {
    await register("patchable");
    const patched = await engine.client.call(engine.client.raw.patchSkill, {
      name: "patchable",
      find: '"tag": "v1"',
      replace: '"tag": "v2"',
      testPayload: "",
    });
    expect(patched.skill).toMatchObject({ version: 2, latestVersion: 2 });
    expect((await invoke("patchable", ok)).result?.stdout).toBe('{"ok": true, "tag": "v2"}\n');

    const missing = await rpcError(
      engine.client.call(engine.client.raw.patchSkill, { name: "patchable", find: "nope", replace: "", testPayload: "" }),
    );
    expect(missing.code).toBe(status.INVALID_ARGUMENT);
    expect(missing.details).toMatch(/^find: does not occur/);
    const ambiguous = await rpcError(
      engine.client.call(engine.client.raw.patchSkill, { name: "patchable", find: "args", replace: "a", testPayload: "" }),
    );
    expect(ambiguous.details).toMatch(/^find: occurs 2 times/);
    const breaking = await rpcError(
      engine.client.call(engine.client.raw.patchSkill, {
        name: "patchable",
        find: "print(",
        replace: "raise ValueError('broken') or print(",
        testPayload: "",
      }),
    );
    expect(breaking.code).toBe(status.FAILED_PRECONDITION);
    expect(breaking.details).toBe("line 5: ValueError: broken");
    expect((await engine.client.get("patchable")).skill?.version).toBe(2);

    // Rollback to any earlier version, history untouched.
    const rolledBack = await engine.client.call(engine.client.raw.rollbackSkill, { name: "patchable", version: 1 });
    expect(rolledBack.skill).toMatchObject({ version: 1, latestVersion: 2 });
    expect((await invoke("patchable", ok)).result?.stdout).toBe('{"ok": true, "tag": "v1"}\n');
    const { versions } = await engine.client.call(engine.client.raw.listSkillVersions, { name: "patchable" });
    expect(versions.map((v) => [v.version, v.origin, v.active])).toEqual([
      [1, "register", true],
      [2, "patch", false],
    ]);
    // The next version continues after the highest one.
    const again = await engine.client.call(engine.client.raw.patchSkill, {
      name: "patchable",
      find: '"v1"',
      replace: '"v3"',
      testPayload: "",
    });
    expect(again.skill?.version).toBe(3);
  });

  it("soft-deletes into .trash/ and restores", async () => {
    await register("trashable");
    const deleted = await engine.client.call(engine.client.raw.deleteSkill, { name: "trashable", force: false });
    expect(deleted.skill?.status).toBe(SkillStatus.SKILL_STATUS_DELETED);
    expect(await readFile(path.join(skills, ".trash", "trashable.py"), "utf8")).toBe(FLAKY);
    expect(await exists(path.join(skills, "trashable.py"))).toBe(false);
    expect((await rpcError(invoke("trashable", ok))).code).toBe(status.FAILED_PRECONDITION);
    expect((await engine.client.get("trashable")).code).toBe(FLAKY);

    await engine.client.call(engine.client.raw.restoreSkill, { name: "trashable" });
    expect((await invoke("trashable", ok)).result?.success).toBe(true);
    expect(await exists(path.join(skills, ".trash", "trashable.py"))).toBe(false);
  });

  it("re-registering a retired or deleted name brings its history back and adds the next version", async () => {
    await register("phoenix");
    await engine.client.call(engine.client.raw.deleteSkill, { name: "phoenix", force: false });
    await register("ember");
    for (let i = 0; i < 3; i++) await invoke("ember", bad);
    await engine.client.call(engine.client.raw.retireDegradedSkills, { dryRun: false, force: false });
    expect((await skillOf("ember"))?.status).toBe(SkillStatus.SKILL_STATUS_RETIRED);

    for (const name of ["phoenix", "ember"]) {
      const again = await register(name, FLAKY.replace('"v1"', '"v2"'));
      expect(again.skill).toMatchObject({ name, version: 2, status: SkillStatus.SKILL_STATUS_ACTIVE, failureCount: 0 });
      const { versions } = await engine.client.call(engine.client.raw.listSkillVersions, { name });
      expect(versions.map((v) => [v.version, v.active])).toEqual([
        [1, false],
        [2, true],
      ]);
      expect(await readFile(path.join(skills, ".versions", name, "1.py"), "utf8")).toBe(FLAKY);
      expect(await exists(path.join(skills, ".trash", `${name}.py`))).toBe(false);
      expect(await exists(path.join(skills, "retired", `${name}.py`))).toBe(false);
      expect(JSON.parse((await invoke(name, ok)).result?.stdout ?? "{}")).toEqual({ ok: true, tag: "v2" });
      await engine.client.call(engine.client.raw.rollbackSkill, { name, version: 1 });
      expect(JSON.parse((await invoke(name, ok)).result?.stdout ?? "{}")).toEqual({ ok: true, tag: "v1" });
    }
  });

  it("restores a canonical file altered on disk on the next read, from the immutable history", async () => {
    await register("tampered");
    const file = path.join(skills, "tampered.py");
    await writeFile(file, "import os\nos.system('echo pwned')\n");
    expect((await engine.client.get("tampered")).code).toBe(FLAKY);
    expect(await readFile(file, "utf8")).toBe(FLAKY);
    await writeFile(file, "print('also altered')\n");
    expect(JSON.parse((await invoke("tampered", ok)).result?.stdout ?? "{}")).toEqual({ ok: true, tag: "v1" });
    expect(await readFile(file, "utf8")).toBe(FLAKY);
  });

  it("a patch whose skill changed while its test ran answers ABORTED and changes nothing", async () => {
    const SLEEPY = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("sleep", 0))
print(json.dumps({"tag": "original"}))
`;
    const sleepy = (code: string) =>
      engine.client.register({
        name: "racer",
        code,
        parametersSchema: '{"type":"object","properties":{"sleep":{"type":"number"}}}',
        testPayload: '{"sleep": 0}',
      });
    await sleepy(SLEEPY);
    const patch = engine.client.call(engine.client.raw.patchSkill, {
      name: "racer",
      find: '"original"',
      replace: '"patched"',
      testPayload: '{"sleep": 3}',
    });
    // The patch's test run is under way once its container runs; a registration overtakes it.
    await eventually("the patch's test container to run", async () =>
      (await containersOf(engine.instanceTag)).some((c) => c.Labels["io.skill-engine.skill"] === "racer" && c.State === "running")
        ? true
        : undefined,
    );
    const overtaking = await sleepy(SLEEPY.replace('"original"', '"overtaking"'));
    expect(overtaking.skill?.version).toBe(2);
    const error = await rpcError(patch);
    expect(error.code).toBe(status.ABORTED);
    expect(error.details).toBe('"racer" changed while the patch was being tested (v1 → v2); read it again and retry');
    expect((await skillOf("racer"))?.version).toBe(2);
    expect((await engine.client.call(engine.client.raw.listSkillVersions, { name: "racer" })).versions).toHaveLength(2);
  });

  it("serializes concurrent re-registrations: every version exists exactly once", async () => {
    const variants = Array.from({ length: 8 }, (_, i) => FLAKY.replace('"v1"', `"race${i}"`));
    const results = await Promise.all(variants.map((code) => register("raced", code)));
    const numbers = results.map((r) => r.skill?.version).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(numbers).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const { versions } = await engine.client.call(engine.client.raw.listSkillVersions, { name: "raced" });
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const version of versions) {
      const file = await readFile(path.join(skills, ".versions", "raced", `${version.version}.py`), "utf8");
      expect(variants).toContain(file);
    }
    expect(new Set(versions.map((v) => v.contentHash)).size).toBe(8);
    const active = await engine.client.get("raced");
    expect(active.skill?.contentHash).toBe(versions[7]?.contentHash);
  });

  it("WipeSandbox loses no skill", async () => {
    // Finished runs' directories go in the background (docs/performance.md#container-removal).
    await runsCleanedUp(engine);
    const wiped = await engine.client.call(engine.client.raw.wipeSandbox, {});
    // No run is in flight and every finished run removed its own directory: nothing was left to wipe.
    expect(wiped.removedRunDirectories).toBe(0);
    expect((await invoke("streak", ok)).result?.success).toBe(true);
  });

  it("answers NOT_FOUND, FAILED_PRECONDITION and INVALID_ARGUMENT with actionable messages", async () => {
    expect((await rpcError(engine.client.call(engine.client.raw.getSkillStats, { name: "ghost" }))).code).toBe(status.NOT_FOUND);
    expect((await rpcError(engine.client.call(engine.client.raw.restoreSkill, { name: "streak" }))).details).toMatch(/nothing to restore/);
    expect((await rpcError(engine.client.call(engine.client.raw.rollbackSkill, { name: "streak", version: 0 }))).code).toBe(
      status.INVALID_ARGUMENT,
    );
    expect((await rpcError(engine.client.call(engine.client.raw.rollbackSkill, { name: "streak", version: 9 }))).code).toBe(
      status.NOT_FOUND,
    );
    expect((await rpcError(engine.client.call(engine.client.raw.rollbackSkill, { name: "streak", version: 1 }))).details).toMatch(
      /already at version 1/,
    );
    expect((await rpcError(engine.client.call(engine.client.raw.deleteSkill, { name: "../x", force: false }))).code).toBe(
      status.INVALID_ARGUMENT,
    );
  });
});

describe("the periodic retirement sweep (SKILL_ENGINE_RETIRE_SWEEP_MINUTES)", () => {
  it("retires a skill that matches the retirement rule without being asked, and leaves a healthy one", async () => {
    // 0.01 minutes: a sweep every 600 ms.
    const swept = await startTestEngine({ env: { SKILL_ENGINE_RETIRE_SWEEP_MINUTES: "0.01" } });
    try {
      await swept.client.register({ name: "failing", code: FLAKY, parametersSchema: SCHEMA, testPayload: ok });
      await swept.client.register({ name: "healthy", code: FLAKY, parametersSchema: SCHEMA, testPayload: ok });
      for (let i = 0; i < 3; i++) await swept.client.invoke("failing", bad);
      await swept.client.invoke("healthy", ok);
      const retired = await eventually("the sweep to retire the failing skill", async () => {
        const skill = (await swept.client.get("failing")).skill;
        return skill?.status === SkillStatus.SKILL_STATUS_RETIRED ? skill : undefined;
      });
      expect(retired.statusReason).toBe("failure_count 3 ≥ 3");
      expect((await swept.client.get("healthy")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    } finally {
      await swept.dispose();
    }
  });
});
