import { describe, expect, it } from "vitest";
import { MISSED_BEATS, RunnerDirectory } from "./runner-directory.js";
import { type RunnerStatus, WIRE_VERSION } from "./wire.js";

const status = (runner: string, over: Partial<RunnerStatus> = {}): RunnerStatus => ({
  v: WIRE_VERSION,
  runner,
  slots: 2,
  busy: 0,
  warmIdle: 1,
  awaitingRemoval: 0,
  engineReady: true,
  engineDetail: "ok",
  stopping: false,
  heartbeatMs: 1000,
  ...over,
});

describe("the runner directory", () => {
  it("forgets a runner after three of its own beats of silence, and at once when it says it is gone", () => {
    let now = 0;
    const directory = new RunnerDirectory(() => now);
    directory.heard(status("slow", { heartbeatMs: 5000 }));
    directory.heard(status("fast", { heartbeatMs: 100 }));
    now = MISSED_BEATS * 100 + 1;
    expect(directory.live().map((s) => s.runner)).toEqual(["slow"]);
    directory.heard(status("slow", { gone: true }));
    expect(directory.live()).toEqual([]);
  });

  it("is ready when a live runner's engine answers and it is not stopping, and says what it sees", () => {
    const directory = new RunnerDirectory(() => 0);
    expect(directory.health(true)).toEqual({ ready: false, detail: expect.stringMatching(/no runner is connected/) });
    directory.heard(status("a", { engineReady: false, engineDetail: "socket gone" }));
    directory.heard(status("b", { stopping: true }));
    expect(directory.health(true)).toMatchObject({
      ready: false,
      detail: expect.stringMatching(/a engine not ready \(socket gone\); b stopping/),
    });
    directory.heard(status("c", { busy: 1 }));
    expect(directory.health(true)).toMatchObject({
      ready: true,
      detail: expect.stringMatching(/^1 of 3 runners serving, 1 of 2 slots free/),
    });
    expect(directory.health(false)).toMatchObject({ ready: false, detail: expect.stringMatching(/bus cannot be reached/) });
  });

  it("wakes a run waiting for room when a runner reports a free slot, not before", async () => {
    const directory = new RunnerDirectory(() => 0);
    const waiting = directory.waitForRoom(60_000, new AbortController().signal);
    directory.heard(status("a", { busy: 2 }));
    directory.heard(status("b", { engineReady: false }));
    let woke = false;
    void waiting.then(() => (woke = true));
    await Promise.resolve();
    expect(woke).toBe(false);
    directory.heard(status("a", { busy: 1 }));
    expect(await waiting).toBe(true);
    const aborted = new AbortController();
    const gaveUp = directory.waitForRoom(60_000, aborted.signal);
    aborted.abort();
    expect(await gaveUp).toBe(false);
  });
});
