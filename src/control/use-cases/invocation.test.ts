import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { failed, succeeded } from "../../../test/support/scripted-sandbox-runner.js";
import { agent, DOUBLER, doubler } from "../../../test/support/skill-samples.js";
import { InvalidArgumentError, SkillNotFoundError } from "../../errors/index.js";

describe("InvokeSkill's use case (real registry and canonical store, scripted sandbox)", () => {
  const current = controlPlanePerTest(({ control }) => control.registration.register(doubler("double_it"), agent("alice")));

  it("runs the active code on the payload and records the invocation", async () => {
    const { control, runner } = current();
    runner.answer(() => succeeded('{"doubled": 42}\n'));

    const invoked = await control.invocation.invoke({ name: "double_it", payload: '{"n": 21}' }, agent("alice"));

    expect(invoked).toMatchObject({ version: 1, steps: [], warnings: [] });
    expect(invoked.result).toMatchObject({ success: true, stdout: '{"doubled": 42}\n' });
    expect(invoked.invocationId).toMatch(/^\d+$/);
    const run = runner.runsFor("invoke")[0];
    expect(run).toMatchObject({ code: DOUBLER, skillName: "double_it", agentId: "alice" });
    expect(JSON.parse(run!.payload)).toEqual({ n: 21 });
    expect(control.queries.stats({ name: "double_it" }, agent("alice"))).toMatchObject({ totalInvocations: 1, totalSuccesses: 1 });
  });

  it("answers a skill that fails in-band, as a result with its cause, and counts it against the skill", async () => {
    const { control, runner } = current();
    runner.answer(() => failed("ZeroDivisionError: division by zero"));

    const invoked = await control.invocation.invoke({ name: "double_it", payload: '{"n": 0}' }, agent("alice"));

    expect(invoked.result).toMatchObject({ success: false, exitCode: 1, errorSummary: "ZeroDivisionError: division by zero" });
    expect(control.queries.stats({ name: "double_it" }, agent("alice"))).toMatchObject({ totalInvocations: 1, totalSuccesses: 0 });
  });

  it("is NOT_FOUND for a name nobody registered and, identically, for another agent's private skill; neither runs anything", async () => {
    const { control, runner } = current();
    const unknown = await control.invocation.invoke({ name: "no_such_skill", payload: "{}" }, agent("alice")).catch((e: unknown) => e);
    const hidden = await control.invocation.invoke({ name: "double_it", payload: '{"n": 1}' }, agent("bob")).catch((e: unknown) => e);

    expect(unknown).toBeInstanceOf(SkillNotFoundError);
    expect(hidden).toBeInstanceOf(SkillNotFoundError);
    expect((hidden as Error).message).toBe((unknown as Error).message.replace("no_such_skill", "double_it"));
    expect(runner.runsFor("invoke")).toHaveLength(0);
  });

  it("refuses a payload that does not fit the parameters schema before any run", async () => {
    const { control, runner } = current();

    await expect(control.invocation.invoke({ name: "double_it", payload: '{"n": "two"}' }, agent("alice"))).rejects.toBeInstanceOf(
      InvalidArgumentError,
    );
    expect(runner.runsFor("invoke")).toHaveLength(0);
  });
});
