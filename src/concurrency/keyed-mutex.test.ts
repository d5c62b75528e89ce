import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { KeyedMutex } from "./keyed-mutex.js";

describe("KeyedMutex", () => {
  it("runs work of one key one at a time, in order, even when some fail", async () => {
    const mutex = new KeyedMutex();
    const events: string[] = [];
    const job = (id: number, fail = false) =>
      mutex.run("skill", async () => {
        events.push(`start ${id}`);
        await sleep(5);
        events.push(`end ${id}`);
        if (fail) throw new Error(`job ${id}`);
        return id;
      });
    const results = await Promise.allSettled([job(1), job(2, true), job(3)]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(events).toEqual(["start 1", "end 1", "start 2", "end 2", "start 3", "end 3"]);
  });

  it("lets different keys run at the same time", async () => {
    const mutex = new KeyedMutex();
    let concurrent = 0;
    let peak = 0;
    const job = (key: string) =>
      mutex.run(key, async () => {
        peak = Math.max(peak, ++concurrent);
        await sleep(10);
        concurrent--;
      });
    await Promise.all([job("a"), job("b"), job("c")]);
    expect(peak).toBe(3);
  });
});
