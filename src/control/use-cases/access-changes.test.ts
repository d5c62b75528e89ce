import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { admin, agent, doubler } from "../../../test/support/skill-samples.js";

describe("the access use cases: visibility and transfer (real registry and canonical store, scripted sandbox)", () => {
  const current = controlPlanePerTest(({ control }) => control.registration.register(doubler("double_it"), agent("alice")));

  it("keeps a new skill private to its owner until the owner makes it public", async () => {
    const { control } = current();
    expect(control.queries.list({}, agent("bob")).map((s) => s.name)).toEqual([]);
    expect(() => control.queries.versions({ name: "double_it" }, agent("bob"))).toThrow(expect.objectContaining({ kind: "not-found" }));

    const updated = await control.access.setVisibility({ name: "double_it", visibility: "public" }, agent("alice"));

    expect(updated.visibility).toBe("public");
    expect(control.queries.list({}, agent("bob")).map((s) => s.name)).toEqual(["double_it"]);
    const invoked = await control.invocation.invoke({ name: "double_it", payload: '{"n": 1}' }, agent("bob"));
    expect(invoked.result.success).toBe(true);
  });

  it("lets only the owner change the visibility: another agent of a public skill is PERMISSION_DENIED", async () => {
    const { control, registry } = current();
    await control.access.setVisibility({ name: "double_it", visibility: "public" }, agent("alice"));

    await expect(control.access.setVisibility({ name: "double_it", visibility: "private" }, agent("bob"))).rejects.toMatchObject({
      kind: "permission-denied",
    });
    expect(registry.get("double_it")?.visibility).toBe("public");
  });

  it("transfers a skill to another agent by an admin only; the new owner then manages it", async () => {
    const { control, registry } = current();
    await expect(control.access.transfer({ name: "double_it", newOwner: "bob" }, agent("alice"))).rejects.toMatchObject({
      kind: "permission-denied",
    });

    const transferred = await control.access.transfer({ name: "double_it", newOwner: "bob" }, admin());

    expect(transferred).toMatchObject({ owner: "bob", visibility: "private" });
    expect(registry.get("double_it")?.owner).toBe("bob");
    await expect(control.lifecycle.retire({ name: "double_it" }, agent("bob"))).resolves.toMatchObject({ status: "retired" });
  });
});
