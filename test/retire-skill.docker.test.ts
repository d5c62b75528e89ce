import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkillStatus, Visibility } from "../src/gen/skillengine/v1/skills.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const CODE = `import json, sys
print(json.dumps({"ok": True}))
`;

/** RetireSkill (docs/skill-lifecycle.md#retire-by-hand), the use case behind the console's Retire action. */
describe("RetireSkill", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: "alice=alice-token-0123456789,bob=bob-token-0123456789ab" } });
    alice = connect(engine.app.port, "alice-token-0123456789");
    bob = connect(engine.app.port, "bob-token-0123456789ab");
    await alice.register({ name: "shared", code: CODE, visibility: Visibility.VISIBILITY_PUBLIC });
    await alice.register({ name: "mine", code: CODE });
  });

  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  it("lets only the owner retire, and RestoreSkill brings the skill back", async () => {
    expect((await rpcError(bob.call(bob.raw.retireSkill, { name: "shared", force: false }))).code).toBe(status.PERMISSION_DENIED);
    expect((await rpcError(bob.call(bob.raw.retireSkill, { name: "mine", force: false }))).code).toBe(status.NOT_FOUND);

    const retired = await alice.call(alice.raw.retireSkill, { name: "shared", force: false });
    expect(retired.skill).toMatchObject({ status: SkillStatus.SKILL_STATUS_RETIRED, statusReason: "retired by alice" });
    const again = await rpcError(alice.call(alice.raw.retireSkill, { name: "shared", force: false }));
    expect(again.code).toBe(status.FAILED_PRECONDITION);
    expect(again.details).toContain("retired");
    expect((await rpcError(alice.invoke("shared"))).code).toBe(status.FAILED_PRECONDITION);

    await alice.call(alice.raw.restoreSkill, { name: "shared" });
    expect((await alice.get("shared")).skill?.status).toBe(SkillStatus.SKILL_STATUS_ACTIVE);
  });
});
