import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { agent, DOUBLER, doubler } from "../../../test/support/skill-samples.js";
import { FailedPreconditionError } from "../../errors/index.js";

describe("the lifecycle use cases: retire, restore, delete (real registry and canonical store, scripted sandbox)", () => {
  const current = controlPlanePerTest(({ control }) => control.registration.register(doubler("double_it"), agent("alice")));

  it("retires by hand: the files move to retired/, invocations are refused with the way back, restore brings it all back", async () => {
    const { control, store, runner } = current();

    const retired = await control.lifecycle.retire({ name: "double_it" }, agent("alice"));

    expect(retired).toMatchObject({ status: "retired", statusReason: "retired by alice" });
    expect(await store.readActive("double_it")).toBeUndefined();
    expect(await store.readActive("double_it", "retired")).toBe(DOUBLER);
    const refused = control.invocation.invoke({ name: "double_it", payload: '{"n": 1}' }, agent("alice"));
    await expect(refused).rejects.toBeInstanceOf(FailedPreconditionError);
    await expect(refused).rejects.toThrow("RestoreSkill brings it back");
    expect(runner.runsFor("invoke")).toHaveLength(0);

    const restored = await control.lifecycle.restore({ name: "double_it" }, agent("alice"));

    expect(restored).toMatchObject({ status: "active", version: 1 });
    expect(await store.readActive("double_it")).toBe(DOUBLER);
    const invoked = await control.invocation.invoke({ name: "double_it", payload: '{"n": 1}' }, agent("alice"));
    expect(invoked.result.success).toBe(true);
  });

  it("refuses to restore a live skill and to retire one twice", async () => {
    const { control } = current();
    await expect(control.lifecycle.restore({ name: "double_it" }, agent("alice"))).rejects.toThrow("nothing to restore");
    await control.lifecycle.retire({ name: "double_it" }, agent("alice"));
    await expect(control.lifecycle.retire({ name: "double_it" }, agent("alice"))).rejects.toBeInstanceOf(FailedPreconditionError);
  });

  it("deletes softly: the files go to the trash, the registry keeps the skill as deleted, restore undoes it", async () => {
    const { control, registry, store } = current();

    await control.lifecycle.delete({ name: "double_it" }, agent("alice"));

    expect(registry.get("double_it")?.status).toBe("deleted");
    expect(await store.readActive("double_it", "trash")).toBe(DOUBLER);
    expect(control.queries.list({}, agent("alice")).map((s) => s.name)).toEqual([]);
    await control.lifecycle.restore({ name: "double_it" }, agent("alice"));
    expect(control.queries.list({}, agent("alice")).map((s) => s.name)).toEqual(["double_it"]);
  });

  it("lets nobody but the owner (or an admin) take a skill out of service", async () => {
    const { control, registry } = current();
    await control.access.setVisibility({ name: "double_it", visibility: "public" }, agent("alice"));

    await expect(control.lifecycle.retire({ name: "double_it" }, agent("bob"))).rejects.toMatchObject({ kind: "permission-denied" });
    expect(registry.get("double_it")?.status).toBe("active");
  });
});
