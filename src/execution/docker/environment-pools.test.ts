import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { SandboxEnvironment } from "../sandbox-runner.js";
import { EnvironmentPools, type EnvironmentPoolsOptions } from "./environment-pools.js";
import { REFILL_AFTER_TAKE_MS, type PoolMember } from "./warm-pool.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

interface Member extends PoolMember {
  /** The environment the member was made for. */
  readonly environmentId: string;
}

const env = (id: string): SandboxEnvironment => ({ id, hostPath: `/home/environments/${id}` });

/** Pools whose members are named `<environment>-<n>`; `discarded` lists every member given back. */
function pools(options: Partial<EnvironmentPoolsOptions<Member>> = {}): { pools: EnvironmentPools<Member>; discarded: string[] } {
  let created = 0;
  const discarded: string[] = [];
  const made = new EnvironmentPools<Member>({
    maxPools: 2,
    size: 1,
    idleMs: 60_000,
    create: async (environment) => ({
      runId: `${environment.id}-${++created}`,
      environmentId: environment.id,
      exited: new Promise(() => undefined),
    }),
    discard: async (member) => {
      discarded.push(member.runId);
    },
    logger: pino({ level: "silent" }),
    ...options,
  });
  return { pools: made, discarded };
}

/** Lets the pools fill what they may (they create one container at a time). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await tick();
}

afterEach(() => {
  vi.useRealTimers();
});

describe("EnvironmentPools", () => {
  it("gives the first run of an environment no container (it starts cold) and that environment a pool, filled once resumed", async () => {
    const { pools: p } = pools();
    expect(p.take(env("a"))).toBeUndefined();
    expect(p.environments).toEqual(["a"]);
    await settle();
    // Not filled while the run that found no pool starts its own container.
    expect(p.idleCount).toBe(0);
    p.resume();
    await settle();
    expect(p.idleCountOf("a")).toBe(1);
    expect(p.take(env("a"))).toMatchObject({ environmentId: "a" });
    await p.close();
  });

  it("fills a new pool at the latest after REFILL_AFTER_TAKE_MS when nobody resumes it", async () => {
    vi.useFakeTimers();
    const { pools: p } = pools();
    p.take(env("a"));
    await vi.advanceTimersByTimeAsync(REFILL_AFTER_TAKE_MS + 1);
    expect(p.idleCountOf("a")).toBe(1);
    await p.close();
  });

  it("never hands a run of one environment a container of another", async () => {
    const { pools: p } = pools({ size: 2 });
    p.take(env("a"));
    p.take(env("b"));
    p.resume();
    await settle();
    expect([p.idleCountOf("a"), p.idleCountOf("b")]).toEqual([2, 2]);
    const taken = [p.take(env("b")), p.take(env("b")), p.take(env("b"))];
    expect(taken.slice(0, 2).map((m) => m?.environmentId)).toEqual(["b", "b"]);
    // b's pool is empty now: nothing of a's serves it.
    expect(taken[2]).toBeUndefined();
    expect(p.idleCountOf("a")).toBe(2);
    await p.close();
  });

  it("keeps at most maxPools, removing the least recently used pool and discarding its containers", async () => {
    const { pools: p, discarded } = pools({ maxPools: 2 });
    p.take(env("a"));
    p.take(env("b"));
    p.resume();
    await settle();
    // a is used again: b is now the least recently used.
    expect(p.take(env("a"))?.environmentId).toBe("a");
    expect(p.take(env("c"))).toBeUndefined();
    expect(p.environments).toEqual(["a", "c"]);
    await settle();
    expect(discarded).toEqual(["b-2"]);
    await p.close();
  });

  it("removes a pool whose environment had no run for the idle lifetime, with its containers", async () => {
    vi.useFakeTimers();
    const { pools: p, discarded } = pools({ idleMs: 10_000 });
    p.take(env("a"));
    p.take(env("b"));
    p.resume();
    await vi.advanceTimersByTimeAsync(6_000);
    expect(p.idleCount).toBe(2);
    // A run of a refreshes a's lifetime; b has none.
    p.take(env("a"));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(p.environments).toEqual(["a"]);
    expect(discarded).toContain("b-2");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(p.environments).toEqual([]);
    expect(p.idleCount).toBe(0);
    await p.close();
  });

  it("starts no refill in any pool while paused", async () => {
    let paused = true;
    const { pools: p } = pools({ paused: () => paused });
    p.take(env("a"));
    p.take(env("b"));
    p.resume();
    await settle();
    expect(p.idleCount).toBe(0);
    paused = false;
    p.resume();
    await settle();
    expect(p.idleCount).toBe(2);
    await p.close();
  });

  it("replaces every pool's idle containers when told, and discards them all at close, making no pool after", async () => {
    const { pools: p, discarded } = pools();
    p.take(env("a"));
    p.take(env("b"));
    p.resume();
    await settle();
    p.replaceIdle("the engine was away");
    expect(discarded.sort()).toEqual(["a-1", "b-2"]);
    await settle();
    expect(p.idleCount).toBe(2);
    await p.close();
    expect(discarded).toHaveLength(4);
    expect(p.take(env("a"))).toBeUndefined();
    expect(p.environments).toEqual([]);
  });

  it("drops a pool whose environment now lives in another directory", async () => {
    const { pools: p, discarded } = pools();
    p.take(env("a"));
    p.resume();
    await settle();
    expect(p.take({ id: "a", hostPath: "/elsewhere/a" })).toBeUndefined();
    await settle();
    expect(discarded).toEqual(["a-1"]);
    expect(p.idleCountOf("a")).toBe(0);
    await p.close();
  });
});
