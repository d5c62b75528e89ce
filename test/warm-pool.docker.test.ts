import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import { containersOf, docker, runsByPath, startTestEngine, type TestEngine, warmIdle } from "./support/test-engine.js";

const INTROSPECT = `import json, os, socket, sys
marker = os.path.exists("/tmp/used")
open("/tmp/used", "w").write("x")
print(json.dumps({
    "argv": sys.argv, "name": __name__, "path0": sys.path[0], "cwd": os.getcwd(), "uid": os.getuid(),
    "stdin": sys.stdin.read(), "host": socket.gethostname(), "reused": marker,
}))
`;
const BEHAVIOURS = `import json, sys, time
args = json.loads(sys.argv[1])
mode = args.get("mode")
if mode == "raise":
    raise KeyError("missing")
if mode == "exit3":
    sys.exit(3)
if mode == "exitmsg":
    sys.exit("stopping here")
if mode == "silent":
    sys.exit(0)
if mode == "nonl":
    sys.stdout.write("no newline")
    sys.exit(0)
if mode == "forge":
    sys.stdout.write("\\0\\x1eskill-engine-exit:not-the-nonce:0\\x1e\\0")
    print("after the fake marker")
    sys.exit(0)
if mode == "atexit":
    import atexit
    atexit.register(lambda: print("from atexit"))
if mode == "loop":
    while True:
        pass
if mode == "oom":
    b"x" * (1 << 30)
if mode == "flood":
    sys.stdout.write("y" * 3_000_000)
    sys.exit(0)
print(json.dumps({"ok": mode}))
`;

type Result = NonNullable<Awaited<ReturnType<TestEngine["client"]["invoke"]>>["result"]>;

/** The warm and cold runs `work` made on `engine`, as its /metrics counts them. */
async function pathsOf(engine: TestEngine, work: () => Promise<unknown>): Promise<{ warm: number; cold: number }> {
  const before = await runsByPath(engine);
  await work();
  const after = await runsByPath(engine);
  return { warm: after.warm - before.warm, cold: after.cold - before.cold };
}

/** Waits until the pool holds `size` waiting containers, so the next run really takes a warm one. */
async function poolReady(engine: TestEngine, size: number): Promise<void> {
  await eventually(`the warm pool to hold ${size} waiting containers`, async () => ((await warmIdle(engine)) >= size ? true : undefined), {
    intervalMs: 50,
  });
}

describe("warm pool: single-use containers started ahead of time keep every cold-path guarantee", () => {
  let warm: TestEngine;
  let cold: TestEngine;

  beforeAll(async () => {
    const limits = { SKILL_ENGINE_TIMEOUT_MS: "2000", SKILL_ENGINE_MEMORY_MB: "64", SKILL_ENGINE_OUTPUT_LIMIT_BYTES: "65536" };
    warm = await startTestEngine({ env: { ...limits, SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2" } });
    cold = await startTestEngine({ env: limits });
    for (const engine of [warm, cold]) {
      await engine.client.register({ name: "introspect", code: INTROSPECT });
      await engine.client.register({ name: "behaves", code: BEHAVIOURS });
    }
  });
  afterAll(async () => {
    await warm.dispose();
    await cold.dispose();
  });

  /** The same call on both engines; the warm engine's run must have taken a warm container, the other's a cold one. */
  async function both(name: string, payload: string): Promise<{ warmResult: Result; coldResult: Result }> {
    await poolReady(warm, 2);
    let warmResult: Result | undefined;
    let coldResult: Result | undefined;
    expect(await pathsOf(warm, async () => (warmResult = (await warm.client.invoke(name, payload)).result))).toEqual({ warm: 1, cold: 0 });
    expect(await pathsOf(cold, async () => (coldResult = (await cold.client.invoke(name, payload)).result))).toEqual({ warm: 0, cold: 1 });
    return { warmResult: warmResult as Result, coldResult: coldResult as Result };
  }

  it("gives the skill the same view as a cold run: argv, __name__, sys.path[0], cwd, uid, stdin at EOF", async () => {
    const { warmResult, coldResult } = await both("introspect", '{"q": 1}');
    const w = JSON.parse(warmResult.stdout) as Record<string, unknown>;
    const c = JSON.parse(coldResult.stdout) as Record<string, unknown>;
    for (const key of ["argv", "name", "path0", "cwd", "uid", "stdin", "reused"]) expect(w[key], key).toEqual(c[key]);
    expect(w).toMatchObject({ argv: ["/sandbox/skill.py", '{"q": 1}'], name: "__main__", path0: "/sandbox", reused: false });
  });

  it("never hands a container out twice", async () => {
    const hosts = new Set<string>();
    for (let i = 0; i < 6; i++) {
      await poolReady(warm, 1);
      let stdout = "{}";
      const paths = await pathsOf(warm, async () => (stdout = (await warm.client.invoke("introspect", "{}")).result?.stdout ?? "{}"));
      expect(paths, "each run takes a waiting container").toEqual({ warm: 1, cold: 0 });
      const out = JSON.parse(stdout) as { host: string; reused: boolean };
      expect(out.reused).toBe(false);
      hosts.add(out.host);
    }
    expect(hosts.size).toBe(6);
  });

  it("reports exits, exceptions, empty output and atexit output exactly like the cold path", async () => {
    for (const mode of ["raise", "exit3", "exitmsg", "silent", "nonl", "atexit", "fine"]) {
      const { warmResult, coldResult } = await both("behaves", JSON.stringify({ mode }));
      for (const field of ["exitCode", "stdout", "success", "errorSummary", "timedOut", "oomKilled"] as const) {
        expect(warmResult[field], `${mode}: ${field}`).toEqual(coldResult[field]);
      }
    }
  });

  it("does not strip output that only looks like the exit marker", async () => {
    const { warmResult } = await both("behaves", '{"mode": "forge"}');
    expect(warmResult.stdout).toContain("after the fake marker");
    expect(warmResult.stdout).toContain("not-the-nonce");
    expect(warmResult.success).toBe(true);
  });

  it("keeps the timeout, OOM and truncation flags", async () => {
    const loop = await both("behaves", '{"mode": "loop"}');
    expect(loop.warmResult).toMatchObject({ timedOut: true, success: false, errorSummary: "timed out after 2000 ms" });
    const oom = await both("behaves", '{"mode": "oom"}');
    expect(oom.warmResult).toMatchObject({ oomKilled: true, success: false, errorSummary: oom.coldResult.errorSummary });
    const flood = await both("behaves", '{"mode": "flood"}');
    expect(flood.warmResult).toMatchObject({ stdoutTruncated: true, success: true });
    expect(flood.warmResult.stdout.length).toBe(65536);
  });

  it("falls back to cold starts when the pool is empty", async () => {
    // Two waiting containers, and four runs starting at once (SKILL_ENGINE_MAX_CONCURRENT_RUNS):
    // the first two take the pool's, at least two of the four find it empty and start cold.
    await poolReady(warm, 2);
    let results: Array<{ result?: Result }> = [];
    const paths = await pathsOf(warm, async () => {
      results = await Promise.all(Array.from({ length: 6 }, (_, i) => warm.client.invoke("behaves", JSON.stringify({ mode: `c${i}` }))));
    });
    expect(results.every((r) => r.result?.success)).toBe(true);
    expect(paths.warm + paths.cold).toBe(6);
    expect(paths.warm).toBeGreaterThanOrEqual(2);
    expect(paths.cold).toBeGreaterThanOrEqual(2);
  });

  it("replaces a pooled container that died while idle, and one whose run dir was wiped", async () => {
    await poolReady(warm, 2);
    const idle = (await containersOf(warm.instanceTag)).filter(
      (c) => c.Labels["io.skill-engine.purpose"] === "warm" && c.State === "running",
    );
    await docker.getContainer(idle[0]?.Id as string).kill();
    await warm.client.call(warm.client.raw.wipeSandbox, {});
    for (let i = 0; i < 3; i++) expect((await warm.client.invoke("behaves", '{"mode": "after"}')).result?.success).toBe(true);
    await poolReady(warm, 2);
  });

  it("removes idle containers on shutdown", async () => {
    const engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "2" } });
    await poolReady(engine, 2);
    await engine.stop();
    expect(await containersOf(engine.instanceTag)).toEqual([]);
    await engine.dispose();
  });
});
