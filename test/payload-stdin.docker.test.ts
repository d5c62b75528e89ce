import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { processesNamed, processesWhoseArgvContains } from "./support/host-probes.js";
import { eventually } from "./support/poll.js";
import { containersOf, docker, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * Names its process after `tag` (its /proc/<pid>/comm, visible on the host) and waits for SIGUSR1,
 * so the test can look at the host while the skill holds its payload; then prints what it saw.
 */
const WITNESS = `import ctypes, json, signal, sys
args = json.loads(sys.argv[1])
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
ctypes.CDLL(None).prctl(15, args["tag"].encode(), 0, 0, 0)  # PR_SET_NAME
signal.sigwait({signal.SIGUSR1})
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0], "stdin": sys.stdin.read()}))
`;

/**
 * The payload reaches a cold container on stdin, as it reaches a warm one: never on a command
 * line, where `ps` shows it to every local user (docs/security.md#the-payload-travels-on-stdin).
 */
describe.each([
  ["cold", "off"],
  ["warm", "on"],
])("the payload of a %s run", (_path, pool) => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine({ env: { SKILL_ENGINE_POOL: pool, SKILL_ENGINE_POOL_SIZE: "1" } });
  }, 60_000);
  afterAll(async () => {
    await engine?.dispose();
  });

  it("is sys.argv[1] inside, and on no command line on the host nor in the container's configuration", async () => {
    const secret = `secret-${randomUUID()}`;
    const tag = `held-${randomUUID().slice(0, 8)}`;
    const payload = JSON.stringify({ secret, tag });
    // The test run proves the skill too; it holds like the invocation below.
    const registered = engine.client.register({ name: "witness", code: WITNESS, testPayload: JSON.stringify({ tag }) });
    await eventually("the test run to hold", async () => ((await processesNamed(tag)).length > 0 ? true : undefined));
    await release(tag);
    await registered;

    const call = engine.client.invoke("witness", payload);
    await eventually("the invocation to hold", async () => ((await processesNamed(tag)).length > 0 ? true : undefined));
    // While the skill holds the payload: no process on the host shows it, nor does the engine.
    expect(await processesWhoseArgvContains(secret)).toEqual([]);
    for (const info of await containersOf(engine.instanceTag)) {
      // The test run's container is removed in the background: it may be gone between list and inspect.
      const inspected = await docker
        .getContainer(info.Id)
        .inspect()
        .catch((error: unknown) => {
          if ((error as { statusCode?: number }).statusCode === 404) return undefined;
          throw error;
        });
      if (inspected === undefined) continue;
      expect(JSON.stringify([inspected.Path, inspected.Args, inspected.Config.Cmd, inspected.Config.Env])).not.toContain(secret);
    }
    await release(tag);

    const { result } = await call;
    expect(result?.success).toBe(true);
    expect(JSON.parse(result?.stdout ?? "")).toEqual({
      argv: ["/sandbox/skill.py", payload],
      name: "__main__",
      path0: "/sandbox",
      stdin: "",
    });
  }, 60_000);
});

/**
 * SIGUSR1 to the held skill process itself, from the host. Not to every container of the engine:
 * that also reached the warm pool's idle container, whose runner a SIGUSR1 ends, and the next run
 * then (rightly) answered UNAVAILABLE, "stopped from outside".
 */
async function release(tag: string): Promise<void> {
  for (const pid of await processesNamed(tag)) {
    try {
      process.kill(pid, "SIGUSR1");
    } catch {
      // Already gone.
    }
  }
}
