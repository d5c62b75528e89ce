import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { failed, succeeded } from "../../../test/support/scripted-sandbox-runner.js";
import { agent, DOUBLER, doubler } from "../../../test/support/skill-samples.js";
import { SkillTestFailedError } from "../../errors/index.js";

const TRIPLER = DOUBLER.replace('payload["n"] * 2', 'payload["n"] * 3');

describe("PatchSkill and RollbackSkill's use case (real registry and canonical store, scripted sandbox)", () => {
  const current = controlPlanePerTest(({ control }) => control.registration.register(doubler("double_it"), agent("alice")));

  const patch = { name: "double_it", find: '["n"] * 2', replace: '["n"] * 3', testPayload: "" };

  it("commits the patched code as v2 after its test run on the stored test payload", async () => {
    const { control, registry, store, runner } = current();

    const patched = await control.patching.patch(patch, agent("alice"));

    expect(patched.skill).toMatchObject({ version: 2, latestVersion: 2 });
    const testRun = runner.runsFor("test").at(-1);
    expect(testRun?.code).toBe(TRIPLER);
    expect(JSON.parse(testRun!.payload)).toEqual({ n: 2 });
    expect(registry.versions("double_it").map((v) => [v.version, v.origin])).toEqual([
      [1, "register"],
      [2, "patch"],
    ]);
    expect(await store.readActive("double_it")).toBe(TRIPLER);
  });

  it("leaves v1 active when the patched code fails its test run", async () => {
    const { control, registry, store, runner } = current();
    runner.answer((request) => (request.code === TRIPLER ? failed("AssertionError: tripled") : succeeded("{}\n")));

    await expect(control.patching.patch(patch, agent("alice"))).rejects.toBeInstanceOf(SkillTestFailedError);

    expect(registry.get("double_it")).toMatchObject({ version: 1, latestVersion: 1 });
    expect(await store.readActive("double_it")).toBe(DOUBLER);
  });

  it("rolls back to v1 from its history with no test run, and refuses a version that does not exist", async () => {
    const { control, registry, store, runner } = current();
    await control.patching.patch(patch, agent("alice"));
    const testRuns = runner.runsFor("test").length;

    const rolledBack = await control.patching.rollback({ name: "double_it", version: 1 }, agent("alice"));

    expect(rolledBack).toMatchObject({ version: 1, latestVersion: 2 });
    expect(registry.get("double_it")?.version).toBe(1);
    expect(await store.readActive("double_it")).toBe(DOUBLER);
    expect(runner.runsFor("test")).toHaveLength(testRuns);
    await expect(control.patching.rollback({ name: "double_it", version: 7 }, agent("alice"))).rejects.toMatchObject({
      kind: "not-found",
    });
  });

  it("lets only the owner patch: another agent is NOT_FOUND for a private skill", async () => {
    await expect(current().control.patching.patch(patch, agent("bob"))).rejects.toMatchObject({ kind: "not-found" });
    expect(current().registry.get("double_it")?.version).toBe(1);
  });
});
