import { cp, mkdtemp, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import { containersOf, makeDirs, runsByPath, startTestEngine, type TestEngine, warmIdle } from "./support/test-engine.js";
import { writeWheel } from "./support/wheelhouse.js";

/**
 * Warm containers for skills with packages (docs/packages.md#warm-containers-of-an-environment):
 * each environment has a pool of its own, whose containers serve that environment's runs only.
 * Two environments hold the same module name with different values, so a run handed the other
 * environment's container would say so in its output.
 */
const USES_ENVMOD = `import json, os, sys
import envmod
reused = os.path.exists("/tmp/used")
open("/tmp/used", "w").write("x")
print(json.dumps({"value": envmod.VALUE, "reused": reused}))
`;
const STDLIB_IMPORTS_ENVMOD = `import json
try:
    import envmod
    print(json.dumps({"value": envmod.VALUE}))
except ModuleNotFoundError:
    print(json.dumps({"value": None}))
`;
const PLAIN_POOL = 1;
const ENV_POOL = 2;

describe("warm pools of environments through a real server, engine and installer", () => {
  let root: string;
  let engine: TestEngine;
  const environmentIds: Record<"a" | "b", string> = { a: "", b: "" };

  /** Every pool full: the plain one and both environments'. */
  const poolsFull = (): Promise<true> =>
    eventually("every warm pool to be full", async () => ((await warmIdle(engine)) >= PLAIN_POOL + 2 * ENV_POOL ? true : undefined), {
      timeoutMs: 60_000,
      intervalMs: 50,
    });

  /** What one invocation printed, and which path it took. */
  const invoke = async (name: string): Promise<{ out: { value: string | null; reused?: boolean }; path: "warm" | "cold" }> => {
    const before = await runsByPath(engine);
    const { result } = await engine.client.invoke(name, "{}", 60_000);
    const after = await runsByPath(engine);
    expect(result?.exitCode, result?.stderr).toBe(0);
    return { out: JSON.parse(result?.stdout ?? "{}"), path: after.warm > before.warm ? "warm" : "cold" };
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "packages-warm-"));
    const wheelhouse = path.join(root, "wheels");
    for (const [version, value] of [
      ["1.0.0", "A"],
      ["2.0.0", "B"],
    ] as const) {
      writeWheel(wheelhouse, { name: "envmod", version, files: { "envmod/__init__.py": `VALUE = ${JSON.stringify(value)}\n` } });
    }
    engine = await startTestEngine({
      dirs: await makeDirs(),
      env: {
        SKILL_ENGINE_WHEELHOUSE: wheelhouse,
        SKILL_ENGINE_POOL: "on",
        SKILL_ENGINE_POOL_SIZE: String(PLAIN_POOL),
        SKILL_ENGINE_ENV_WARM_POOLS: "4",
        SKILL_ENGINE_ENV_POOL_SIZE: String(ENV_POOL),
      },
    });
    for (const [key, version] of [
      ["a", "1.0.0"],
      ["b", "2.0.0"],
    ] as const) {
      const registered = await engine.client.register(
        { name: `uses_${key}`, code: USES_ENVMOD, testPayload: "{}", requirements: [`envmod==${version}`] },
        300_000,
      );
      environmentIds[key] = registered.skill?.environmentId ?? "";
    }
    await engine.client.register({ name: "stdlib_only", code: STDLIB_IMPORTS_ENVMOD, testPayload: "{}" });
  }, 600_000);
  afterAll(async () => {
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("runs the second invocation of a skill with an environment on a warm container of that environment", async () => {
    expect(environmentIds.a).not.toBe(environmentIds.b);
    for (const [name, value] of [
      ["uses_a", "A"],
      ["uses_b", "B"],
    ] as const) {
      expect((await invoke(name)).out.value).toBe(value);
      await poolsFull();
      const second = await invoke(name);
      expect(second).toEqual({ out: { value, reused: false }, path: "warm" });
    }
  }, 180_000);

  it("never gives a run of one environment a container of the other, nor a plain run an environment", async () => {
    for (let round = 0; round < 3; round++) {
      await poolsFull();
      // Each pool holds two: a run of each kind drains none of them, so every one of these is warm.
      const runs = [await invoke("uses_b"), await invoke("uses_a"), await invoke("stdlib_only"), await invoke("uses_b")];
      expect(runs.map((run) => run.out.value)).toEqual(["B", "A", null, "B"]);
      expect(runs.map((run) => run.path)).toEqual(["warm", "warm", "warm", "warm"]);
    }
  }, 300_000);

  it("does not hand out a warm container whose environment's directory was replaced since it was made", async () => {
    await poolsFull();
    // What a rebuild does: a complete copy takes the directory's place, the old one is deleted.
    // A container made before still mounts the deleted one, where nothing can be imported.
    const dir = path.join(engine.home, "environments", environmentIds.a);
    await cp(dir, `${dir}.new`, { recursive: true, preserveTimestamps: true });
    await rename(dir, `${dir}.old`);
    await rename(`${dir}.new`, dir);
    await rm(`${dir}.old`, { recursive: true, force: true });
    const afterReplace = await invoke("uses_a");
    expect(afterReplace).toEqual({ out: { value: "A", reused: false }, path: "cold" });
    // Its pool is made again, with the new directory mounted.
    await poolsFull();
    expect(await invoke("uses_a")).toEqual({ out: { value: "A", reused: false }, path: "warm" });
  }, 180_000);

  it("leaves no container behind once stopped", async () => {
    await poolsFull();
    await engine.stop();
    expect(await containersOf(engine.instanceTag)).toEqual([]);
  }, 120_000);
});
