import { describe, expect, it } from "vitest";
import { collectInSlices, forEachSlice, mapInSlices, SliceGate } from "./slices.js";

/** Other work of the process: re-arms itself every turn of the event loop until stopped. */
function ticker(log: string[]): { stop(): void } {
  let running = true;
  const tick = (): void => {
    if (!running) return;
    log.push("tick");
    setImmediate(tick);
  };
  setImmediate(tick);
  return { stop: () => (running = false) };
}

describe("work in slices", () => {
  it("hands out consecutive slices with their offsets, each after a yield to the event loop", async () => {
    const seen: string[] = [];
    const items = Array.from({ length: 7 }, (_, i) => i);
    const other = ticker(seen);
    await forEachSlice(items, 3, (slice, offset) => void seen.push(`${offset}:${slice.join(",")}`));
    other.stop();
    expect(seen.filter((s) => s !== "tick")).toEqual(["0:0,1,2", "3:3,4,5", "6:6"]);
    // Never two slices without the rest of the process getting a turn between them.
    expect(seen.join(" ")).not.toMatch(/\d \d/);
  });

  it("runs one slice per turn of the event loop across concurrent work sharing a gate, where bare yields would run them back to back", async () => {
    const interleaved = async (gate: SliceGate | undefined): Promise<string[]> => {
      const log: string[] = [];
      const other = ticker(log);
      const slicing = gate ? { turn: () => gate.turn() } : {};
      await Promise.all(
        ["a", "b", "c"].map((name) => forEachSlice([1, 2, 3, 4], 1, (slice) => void log.push(`${name}${slice[0]}`), slicing)),
      );
      other.stop();
      return log;
    };
    const gated = await interleaved(new SliceGate());
    expect(gated.filter((s) => s !== "tick")).toEqual(["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3", "a4", "b4", "c4"]);
    expect(gated.join(" ")).not.toMatch(/[abc]\d [abc]\d/);
    // Without the gate, the three recordings' yields all resolve in the same turn.
    expect((await interleaved(undefined)).join(" ")).toMatch(/a1 b1 c1/);
  });

  it("stops before the next slice once the signal fires, with its reason", async () => {
    const controller = new AbortController();
    const done: number[] = [];
    const reason = new Error("deadline");
    const run = forEachSlice(
      [1, 2, 3, 4, 5, 6],
      2,
      (slice) => {
        done.push(...slice);
        controller.abort(reason);
      },
      { signal: controller.signal },
    );
    await expect(run).rejects.toBe(reason);
    expect(done).toEqual([1, 2]);
  });

  it("maps, and collects lazily produced items, in slices and in order", async () => {
    expect(await mapInSlices([1, 2, 3, 4, 5], 2, (n, i) => n * 10 + i)).toEqual([10, 21, 32, 43, 54]);
    let produced = 0;
    const lazy = function* (): Generator<number> {
      for (let i = 0; i < 5; i++) {
        produced++;
        yield i;
      }
    };
    const seen: string[] = [];
    const collected = collectInSlices(lazy(), 2, {
      turn: async () => {
        seen.push(`turn after ${produced}`);
        await new Promise((resolve) => setImmediate(resolve));
      },
    });
    expect(await collected).toEqual([0, 1, 2, 3, 4]);
    expect(seen).toEqual(["turn after 0", "turn after 2", "turn after 4"]);
  });

  it("refuses a slice size that is not a positive integer", async () => {
    await expect(forEachSlice([1], 0, () => undefined)).rejects.toThrow(RangeError);
    await expect(collectInSlices([1], 1.5)).rejects.toThrow(RangeError);
  });
});
