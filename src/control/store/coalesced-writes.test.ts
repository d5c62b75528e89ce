import { describe, expect, it } from "vitest";
import { CoalescedWrites } from "./coalesced-writes.js";

describe("CoalescedWrites", () => {
  it("turns many scheduled rewrites within the window into one, and close writes what is pending", async () => {
    let writes = 0;
    const coalesced = new CoalescedWrites(
      async () => void writes++,
      () => undefined,
      60_000,
    );
    for (let i = 0; i < 10; i++) coalesced.schedule();
    expect(writes).toBe(0);
    await coalesced.close();
    expect(writes).toBe(1);
  });

  it("never overlaps two writes, and flush waits for its own", async () => {
    let running = 0;
    let most = 0;
    const coalesced = new CoalescedWrites(
      async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
      },
      () => undefined,
      60_000,
    );
    await Promise.all([coalesced.flush(), coalesced.flush(), coalesced.flush()]);
    expect(most).toBe(1);
    expect(running).toBe(0);
  });

  it("reports a failed write to onError and to flush's caller, and writes again next time", async () => {
    const errors: unknown[] = [];
    let fail = true;
    let written = 0;
    const coalesced = new CoalescedWrites(
      async () => {
        if (fail) throw new Error("disk full");
        written++;
      },
      (error) => errors.push(error),
      60_000,
    );
    await expect(coalesced.flush()).rejects.toThrow("disk full");
    expect(errors).toHaveLength(1);
    fail = false;
    await coalesced.flush();
    expect(written).toBe(1);
  });
});
