import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OnFailure, type ComposedStep } from "../src/gen/skillengine/v1/composition.js";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const ECHO = `import json, sys
print(json.dumps({"echo": json.loads(sys.argv[1])}))
`;
const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01" };

function step(id: string, skill: string, args: unknown): ComposedStep {
  return { id, skill, args: JSON.stringify(args), when: "", onFailure: OnFailure.ON_FAILURE_UNSPECIFIED };
}

/** What RestoreSkill and DeleteSkill do beyond moving files: the composed-skill cap and grants. */
describe("restore and delete: the composed-skill cap on RestoreSkill, grants on DeleteSkill", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`, SKILL_ENGINE_COMPOSED_SKILLS_PER_AGENT: "2" },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    await alice.register({ name: "echo", code: ECHO });
  });
  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  const composed = (name: string) =>
    alice.call(alice.raw.registerComposedSkill, {
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
  const statusOf = async (name: string) => (await alice.get(name)).skill?.status;

  it("a restored composed skill counts against the cap again: restoring one past it evicts the least used other (docs/composition.md#eviction)", async () => {
    await composed("macro_a");
    await composed("macro_b");
    await alice.call(alice.raw.deleteSkill, { name: "macro_a", force: false });
    expect((await composed("macro_c")).evicted).toEqual([]);
    // macro_b is used; macro_c is not: macro_c is the least used of the others.
    await alice.invoke("macro_b");
    const restored = await alice.call(alice.raw.restoreSkill, { name: "macro_a" });
    expect(restored.skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    expect(restored.evicted).toEqual(["macro_c"]);
    expect(await statusOf("macro_c")).toBe(SkillStatus.SKILL_STATUS_RETIRED);
    expect((await alice.get("macro_c")).skill?.statusReason).toMatch(/^evicted: alice keeps at most 2 composed skills/);
    expect(await statusOf("macro_b")).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
    // A plain skill has no cap to keep.
    await alice.call(alice.raw.deleteSkill, { name: "echo", force: true });
    expect((await alice.call(alice.raw.restoreSkill, { name: "echo" })).evicted).toEqual([]);
  });

  it("DeleteSkill revokes the skill's grants and says which; a restore does not share it again (docs/security.md#delete-revokes-grants)", async () => {
    await alice.register({ name: "shared_tool", code: ECHO });
    await alice.call(alice.raw.grantSkill, { name: "shared_tool", granteeAgent: "bob", granteeUser: "", version: 0 });
    expect((await bob.invoke("shared_tool", '{"x": 1}')).result?.success).toBe(true);
    const deleted = await alice.call(alice.raw.deleteSkill, { name: "shared_tool", force: false });
    expect(deleted.skill?.status).toBe(SkillStatus.SKILL_STATUS_DELETED);
    expect(deleted.revokedGrants.map((g) => g.granteeAgent)).toEqual(["bob"]);
    const restored = await alice.call(alice.raw.restoreSkill, { name: "shared_tool" });
    expect(restored.skill).toMatchObject({
      status: SkillStatus.SKILL_STATUS_ACTIVE,
      visibility: Visibility.VISIBILITY_PRIVATE,
      grantCount: 0,
    });
    expect((await alice.call(alice.raw.listGrants, { name: "shared_tool" })).grants).toEqual([]);
    expect((await rpcError(bob.invoke("shared_tool", '{"x": 1}'))).code).toBe(status.NOT_FOUND);
    // Sharing it again is a new, deliberate grant.
    await alice.call(alice.raw.grantSkill, { name: "shared_tool", granteeAgent: "bob", granteeUser: "", version: 0 });
    expect((await bob.invoke("shared_tool", '{"x": 2}')).result?.success).toBe(true);
  });

  it("retiring keeps the grants: a retired skill restored is shared as it was", async () => {
    await alice.register({ name: "kept_share", code: ECHO });
    await alice.call(alice.raw.grantSkill, { name: "kept_share", granteeAgent: "bob", granteeUser: "", version: 0 });
    await alice.call(alice.raw.retireSkill, { name: "kept_share", force: false });
    const restored = await alice.call(alice.raw.restoreSkill, { name: "kept_share" });
    expect(restored.skill).toMatchObject({ visibility: Visibility.VISIBILITY_INTERNAL, grantCount: 1 });
    expect((await bob.invoke("kept_share", '{"x": 3}')).result?.success).toBe(true);
  });
});
