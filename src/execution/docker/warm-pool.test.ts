import pino from "pino";
import { describe, expect, it } from "vitest";
import { type PoolMember, REFILL_AFTER_TAKE_MS, WarmPool, type WarmPoolOptions } from "./warm-pool.js";

const tick = () => new Promise((resolve) => setImmediate(resolve));

function member(runId: string): PoolMember {
  return { runId, exited: new Promise(() => undefined) };
}

/** A pool whose members are named m1, m2, … in the order it creates them; `created()` counts them. */
function countingPool(
  size: number,
  options: Partial<WarmPoolOptions<PoolMember>> = {},
): { pool: WarmPool<PoolMember>; created: () => number } {
  let created = 0;
  const pool = new WarmPool<PoolMember>({
    size,
    idleMs: 60_000,
    create: async () => member(`m${++created}`),
    discard: async () => undefined,
    logger: pino({ level: "silent" }),
    ...options,
  });
  return { pool, created: () => created };
}

describe("WarmPool refills", () => {
  it("starts no refill while paused and resumes when told", async () => {
    let paused = false;
    const { pool, created } = countingPool(2, { paused: () => paused });
    pool.start();
    for (let i = 0; i < 10 && pool.idleCount < 2; i++) await tick();
    expect(pool.idleCount).toBe(2);

    paused = true;
    expect(pool.take()).toBeDefined();
    expect(pool.take()).toBeDefined();
    for (let i = 0; i < 5; i++) await tick();
    expect(created()).toBe(2);
    expect(pool.idleCount).toBe(0);

    paused = false;
    pool.resume();
    for (let i = 0; i < 10 && pool.idleCount < 2; i++) await tick();
    expect(created()).toBe(4);
    expect(pool.idleCount).toBe(2);
    await pool.close();
  });

  it("refills after a take when resumed (the run's caller answered), or at the latest after REFILL_AFTER_TAKE_MS", async () => {
    const { pool, created } = countingPool(1);
    pool.start();
    for (let i = 0; i < 10 && pool.idleCount < 1; i++) await tick();
    expect(created()).toBe(1);

    // Taken: no container start competes with the run until the owner resumes the pool.
    expect(pool.take()).toBeDefined();
    for (let i = 0; i < 5; i++) await tick();
    expect(created()).toBe(1);
    pool.resume();
    for (let i = 0; i < 10 && pool.idleCount < 1; i++) await tick();
    expect(created()).toBe(2);

    // Not resumed (a long run): refilled after REFILL_AFTER_TAKE_MS all the same.
    expect(pool.take()).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, REFILL_AFTER_TAKE_MS + 50));
    for (let i = 0; i < 10 && pool.idleCount < 1; i++) await tick();
    expect(created()).toBe(3);
    await pool.close();
  });

  it("replaces every idle container when told (the engine came back): discarded, refilled, none handed out", async () => {
    const discarded: string[] = [];
    const { pool, created } = countingPool(2, {
      discard: async (m) => {
        discarded.push(m.runId);
      },
    });
    pool.start();
    for (let i = 0; i < 10 && pool.idleCount < 2; i++) await tick();
    expect(created()).toBe(2);

    pool.replaceIdle("the engine was away");
    expect(discarded.sort()).toEqual(["m1", "m2"]);
    for (let i = 0; i < 10 && pool.idleCount < 2; i++) await tick();
    expect(created()).toBe(4);
    const taken = [pool.take()?.runId, pool.take()?.runId].sort();
    expect(taken).toEqual(["m3", "m4"]);
    await pool.close();
  });
});
