import { describe, expect, it } from "vitest";
import { RemovalQueue } from "./removal-queue.js";

/** A removal the test finishes by hand. */
function manualRemovals(): { remove: (item: string) => Promise<void>; started: string[]; finish: (item: string) => void } {
  const started: string[] = [];
  const pending = new Map<string, () => void>();
  return {
    started,
    remove: (item) =>
      new Promise<void>((resolve) => {
        started.push(item);
        pending.set(item, resolve);
      }),
    finish: (item) => {
      pending.get(item)?.();
      pending.delete(item);
    },
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("RemovalQueue", () => {
  it("removes at most `workers` items at once, oldest first", async () => {
    const removals = manualRemovals();
    const queue = new RemovalQueue({ remove: removals.remove, workers: 2, maxWaiting: 10 });
    for (const item of ["a", "b", "c", "d"]) await queue.enqueue(item);
    expect(removals.started).toEqual(["a", "b"]);
    expect(queue.pending).toBe(4);
    removals.finish("a");
    await tick();
    expect(removals.started).toEqual(["a", "b", "c"]);
    expect(queue.pending).toBe(3);
  });

  it("makes a caller wait for room when `maxWaiting` items already wait", async () => {
    const removals = manualRemovals();
    const queue = new RemovalQueue({ remove: removals.remove, workers: 1, maxWaiting: 1 });
    await queue.enqueue("a"); // being removed
    await queue.enqueue("b"); // waiting: the queue is full
    let queued = false;
    const third = queue.enqueue("c").then(() => (queued = true));
    await tick();
    expect(queued).toBe(false);
    removals.finish("a"); // b starts, which makes room for c
    await third;
    expect(queued).toBe(true);
    expect(removals.started).toEqual(["a", "b"]);
  });

  it("drains: resolves only once every item, including ones queued meanwhile, is removed", async () => {
    const removals = manualRemovals();
    const removed: string[] = [];
    const queue = new RemovalQueue({
      remove: async (item: string) => {
        await removals.remove(item);
        removed.push(item);
      },
      workers: 1,
      maxWaiting: 4,
    });
    await queue.enqueue("a");
    let drained = false;
    const drain = queue.drain().then(() => (drained = true));
    await queue.enqueue("b");
    removals.finish("a");
    await tick();
    expect(drained).toBe(false);
    removals.finish("b");
    await drain;
    expect(removed).toEqual(["a", "b"]);
    expect(queue.pending).toBe(0);
  });

  it("goes on after a removal that throws, and tells the owner after each removal", async () => {
    let told = 0;
    const removed: string[] = [];
    const queue = new RemovalQueue({
      remove: async (item: string) => {
        if (item === "bad") throw new Error("engine away");
        removed.push(item);
      },
      workers: 1,
      maxWaiting: 4,
      onRemoved: () => told++,
    });
    await queue.enqueue("bad");
    await queue.enqueue("good");
    await queue.drain();
    expect(removed).toEqual(["good"]);
    expect(told).toBe(2);
  });
});
