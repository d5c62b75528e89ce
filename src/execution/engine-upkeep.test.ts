import pino from "pino";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EngineUpkeep } from "./engine-upkeep.js";
import type { EngineHealth } from "./sandbox-runner.js";

const PROBE_MS = 1_000;

/** A plane whose engine answers what `answers` holds next (the last answer repeats), counting sweeps and pool starts. */
function scriptedPlane(answers: Array<EngineHealth | Promise<EngineHealth>>) {
  const counts = { probes: 0, sweeps: 0, poolStarts: 0 };
  const plane = {
    health: async () => answers[Math.min(counts.probes++, answers.length - 1)]!,
    reapOrphans: async () => {
      counts.sweeps++;
      return { containers: 0, runDirectories: 0 };
    },
    startPool: () => {
      counts.poolStarts++;
    },
  };
  return { plane, counts };
}

const up: EngineHealth = { ready: true, detail: "ok" };
const down: EngineHealth = { ready: false, detail: "engine gone" };

describe("EngineUpkeep", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("sweeps on the first ready probe and on every return of the engine, and starts the pool once", async () => {
    const { plane, counts } = scriptedPlane([up, up, down, up]);
    const seen: Array<[boolean, boolean]> = [];
    const settled: boolean[] = [];
    const upkeep = new EngineUpkeep({
      plane,
      probeEveryMs: PROBE_MS,
      sweepEveryMs: 0,
      logger: pino({ level: "silent" }),
      onHealth: (health, wasReady) => seen.push([health.ready, wasReady]),
      afterUpkeep: (health) => settled.push(health.ready),
    });
    await upkeep.start();
    expect(counts).toEqual({ probes: 1, sweeps: 1, poolStarts: 1 });
    expect(upkeep.engineReady).toBe(true);

    await vi.advanceTimersByTimeAsync(PROBE_MS); // still up: no sweep is due
    expect(counts.sweeps).toBe(1);
    await vi.advanceTimersByTimeAsync(PROBE_MS); // down
    expect(upkeep.engineReady).toBe(false);
    await vi.advanceTimersByTimeAsync(PROBE_MS); // back: swept again, the pool is not started twice
    expect(counts).toEqual({ probes: 4, sweeps: 2, poolStarts: 1 });
    expect(seen).toEqual([
      [true, false],
      [true, true],
      [false, true],
      [true, false],
    ]);
    expect(settled).toEqual([true, true, false, true]);
    upkeep.stop();
  });

  it("sweeps again while the engine stays up once sweepEveryMs has passed", async () => {
    const { plane, counts } = scriptedPlane([up]);
    const upkeep = new EngineUpkeep({ plane, probeEveryMs: PROBE_MS, sweepEveryMs: 3 * PROBE_MS, logger: pino({ level: "silent" }) });
    await upkeep.start();
    await vi.advanceTimersByTimeAsync(2 * PROBE_MS);
    expect(counts.sweeps).toBe(1);
    await vi.advanceTimersByTimeAsync(PROBE_MS);
    expect(counts.sweeps).toBe(2);
    upkeep.stop();
  });

  it("a probe under way when it stops has no effect, and no probe follows", async () => {
    let answer: (health: EngineHealth) => void = () => undefined;
    const pending = new Promise<EngineHealth>((resolve) => (answer = resolve));
    const { plane, counts } = scriptedPlane([pending]);
    const onHealth = vi.fn();
    const upkeep = new EngineUpkeep({ plane, probeEveryMs: PROBE_MS, sweepEveryMs: 0, logger: pino({ level: "silent" }), onHealth });
    const started = upkeep.start();
    upkeep.stop();
    answer(up);
    await started;
    await vi.advanceTimersByTimeAsync(5 * PROBE_MS);
    expect(onHealth).not.toHaveBeenCalled();
    expect(counts).toEqual({ probes: 1, sweeps: 0, poolStarts: 0 });
    expect(upkeep.engineReady).toBe(false);
  });

  it("logs a failed probe and keeps probing", async () => {
    const errors: string[] = [];
    const logger = pino({ level: "error" }, { write: (line: string) => errors.push(JSON.parse(line).msg) });
    let probes = 0;
    const plane = {
      health: async (): Promise<EngineHealth> => {
        if (probes++ === 0) throw new Error("socket hang up");
        return up;
      },
      reapOrphans: async () => ({ containers: 0, runDirectories: 0 }),
      startPool: () => undefined,
    };
    const upkeep = new EngineUpkeep({ plane, probeEveryMs: PROBE_MS, sweepEveryMs: 0, logger });
    await upkeep.start();
    expect(errors).toEqual(["engine probe failed"]);
    await vi.advanceTimersByTimeAsync(PROBE_MS);
    expect(upkeep.engineReady).toBe(true);
    upkeep.stop();
  });
});
