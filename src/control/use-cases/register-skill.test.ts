import { describe, expect, it } from "vitest";
import { controlPlanePerTest } from "../../../test/support/control-plane-fixture.js";
import { failed, succeeded } from "../../../test/support/scripted-sandbox-runner.js";
import { agent, DOUBLER, doubler } from "../../../test/support/skill-samples.js";
import { SkillTestFailedError } from "../../errors/index.js";

describe("RegisterSkill's use case (real registry and canonical store, scripted sandbox)", () => {
  const current = controlPlanePerTest();

  it("runs the test payload once, then commits v1: registry row, canonical file, caller as private owner", async () => {
    const { control, registry, store, runner } = current();
    runner.answer(() => succeeded('{"doubled": 4}\n'));

    const registered = await control.registration.register(doubler("double_it"), agent("alice"));

    expect(registered.test?.stdout).toBe('{"doubled": 4}\n');
    expect(registered.skill).toMatchObject({ name: "double_it", version: 1, owner: "alice", visibility: "private", status: "active" });
    expect(runner.runsFor("test")).toHaveLength(1);
    expect(runner.runsFor("test")[0]).toMatchObject({ code: DOUBLER, skillName: "double_it", agentId: "alice" });
    expect(JSON.parse(runner.runsFor("test")[0]!.payload)).toEqual({ n: 2 });
    expect(registry.get("double_it")?.version).toBe(1);
    expect(await store.readActive("double_it")).toBe(DOUBLER);
    expect(await store.readVersion("double_it", 1)).toBe(DOUBLER);
  });

  it("refuses a version whose test run fails with the run's one-line cause, and leaves the active version untouched", async () => {
    const { control, registry, store, runner } = current();
    await control.registration.register(doubler("double_it"), agent("alice"));
    const broken = DOUBLER.replace('payload["n"] * 2', 'int("x")');
    runner.answer((request) =>
      request.code === broken ? failed("ValueError: invalid literal for int() with base 10: 'x'") : succeeded("{}\n"),
    );

    const attempt = control.registration.register(doubler("double_it", { code: broken }), agent("alice"));

    await expect(attempt).rejects.toBeInstanceOf(SkillTestFailedError);
    await expect(attempt).rejects.toThrow("ValueError: invalid literal for int() with base 10: 'x'");
    expect(registry.get("double_it")).toMatchObject({ version: 1, latestVersion: 1, status: "active" });
    expect(registry.versions("double_it").map((v) => v.version)).toEqual([1]);
    expect(await store.readActive("double_it")).toBe(DOUBLER);
    expect(await store.readVersion("double_it", 2)).toBeUndefined();
  });

  it("commits nothing at all when a new skill's first test run fails", async () => {
    const { control, registry, store, runner } = current();
    runner.answer(() => failed("KeyError: 'n'"));

    await expect(control.registration.register(doubler("never_there"), agent("alice"))).rejects.toThrow("KeyError: 'n'");

    expect(registry.get("never_there")).toBeUndefined();
    expect(await store.readActive("never_there")).toBeUndefined();
  });

  it("answers an identical registration with the active version: no test run, no new version; any declaration that differs makes one", async () => {
    const { control, registry, runner } = current();
    runner.answer(() => succeeded('{"doubled": 4}\n'));
    await control.registration.register(doubler("same_doubler", { exampleQueries: ["double a number"] }), agent("alice"));
    expect(runner.runsFor("test")).toHaveLength(1);

    // Spacing and key order of the JSON fields aside, and with other example queries: the same version.
    const again = await control.registration.register(
      doubler("same_doubler", {
        parametersSchema: JSON.stringify(JSON.parse(doubler("x").parametersSchema), null, 2),
        testPayload: ' { "n" : 2 } ',
        exampleQueries: ["twice the integer"],
        visibility: "private",
      }),
      agent("alice"),
    );
    expect(again).toMatchObject({ unchanged: true, skill: { name: "same_doubler", version: 1 } });
    expect(again.test).toBeUndefined();
    expect(runner.runsFor("test")).toHaveLength(1);
    expect(registry.versions("same_doubler").map((v) => v.version)).toEqual([1]);

    // Each of these is part of a version: a new one, after its test run.
    const changes: Array<Parameters<typeof doubler>[1]> = [
      { description: "Doubles n, again." },
      { testPayload: '{"n": 3}' },
      { visibility: "public" },
      { secrets: ["DOUBLER_KEY"] },
      { testFiles: [{ path: "in.txt", content: Buffer.from("x") }] },
    ];
    let version = 1;
    for (const change of changes) {
      const changed = await control.registration.register(doubler("same_doubler", change), agent("alice")).catch((error: unknown) => error);
      if (change?.secrets) {
        // The registering agent has no such secret: refused before any run, still no version.
        expect(changed).toMatchObject({ kind: "failed-precondition" });
        continue;
      }
      expect(changed).toMatchObject({ skill: { version: ++version } });
      expect((changed as { unchanged?: boolean }).unchanged).toBeUndefined();
    }
    // Another agent's identical registration is refused as before, not answered as unchanged.
    await expect(control.registration.register(doubler("same_doubler"), agent("bob"))).rejects.toMatchObject({ kind: "permission-denied" });
  });

  it("keeps a registered name its owner's: another agent cannot register a version of a public skill", async () => {
    const { control } = current();
    await control.registration.register(doubler("shared_doubler", { visibility: "public" }), agent("alice"));

    await expect(control.registration.register(doubler("shared_doubler"), agent("bob"))).rejects.toMatchObject({
      kind: "permission-denied",
    });
  });
});
