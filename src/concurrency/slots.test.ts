import { describe, expect, it } from "vitest";
import { Slots } from "./slots.js";

describe("Slots", () => {
  it("runs at most `size` at once, the rest in the order they came, and frees a slot when work fails", async () => {
    const slots = new Slots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const jobs = [0, 1, 2, 3].map((i) =>
      slots.run(async () => {
        running++;
        most = Math.max(most, running);
        order.push(i);
        await new Promise<void>((resolve) => releases.push(resolve));
        running--;
        if (i === 0) throw new Error("job 0 failed");
        return i;
      }),
    );
    while (releases.length < 2) await Promise.resolve();
    expect(order).toEqual([0, 1]);
    releases[0]?.();
    await expect(jobs[0]).rejects.toThrow("job 0 failed");
    await expect.poll(() => order, { timeout: 30_000 }).toEqual([0, 1, 2]);
    for (let i = 1; i < 4; i++) {
      await expect.poll(() => releases.length, { timeout: 30_000 }).toBeGreaterThan(i);
      releases[i]?.();
    }
    expect(await Promise.all(jobs.slice(1))).toEqual([1, 2, 3]);
    expect(order).toEqual([0, 1, 2, 3]);
    expect(most).toBe(2);
  });

  it("refuses a size that is not a positive integer", () => {
    expect(() => new Slots(0)).toThrow(RangeError);
  });
});
