import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunCancelledError } from "../../errors/index.js";
import { ConditionError } from "./condition.js";
import { ConditionHost } from "./condition-host.js";
import type { TemplateScope } from "./template.js";

const scope: TemplateScope = {
  params: { city: "Oslo", units: "metric" },
  steps: { geo: { output: { lat: 59.9 }, stdout: '{"lat": 59.9}', stderr: "", exit_code: 0, success: true, files: [] } },
};

/** A condition that doubles a string until flattening it needs more memory than any small heap has. */
const EXHAUSTS_MEMORY = '($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f("x", 27)) > 0)';

/** True while the process exists (signal 0 checks without sending anything). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Resolves once `pid` is gone; the test's ceiling bounds the wait. */
async function gone(pid: number): Promise<void> {
  while (exists(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe("the condition host: conditions in a child process of their own", () => {
  let host: ConditionHost;
  beforeAll(() => {
    host = new ConditionHost();
  });
  afterAll(async () => {
    await host.close();
  });

  it("answers conditions from one persistent child process", async () => {
    expect(await host.evaluate('params.units = "metric" and steps.geo.output.lat > 50', scope)).toBe(true);
    const pid = host.pid;
    expect(pid).toBeDefined();
    expect(pid).not.toBe(process.pid);
    expect(await host.evaluate("params.missing", scope)).toBe(false);
    expect(host.pid).toBe(pid);
  });

  it("answers concurrent callers each with its own value, in order", async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => host.evaluate(`${i} % 2 = 0 and params.city = "Oslo"`, scope)));
    expect(answers).toEqual(Array.from({ length: 20 }, (_, i) => i % 2 === 0));
  });

  it("fails a condition that breaks a bound with the cause, in-band, and keeps its process", async () => {
    await host.evaluate("true", scope);
    const pid = host.pid;
    const failure = host.evaluate('$length($pad("x", 250000000)) > 0', scope);
    await expect(failure).rejects.toBeInstanceOf(ConditionError);
    await expect(failure).rejects.toThrow(
      /^condition "\$length\(\$pad\(\\"x\\", 250000000\)\) > 0" failed: \$pad would build a string of 250000000 characters; the limit is 1000000/,
    );
    expect(host.pid).toBe(pid);
  });

  it("kills a condition still running inside one built-in at the wall clock, while this event loop runs on", async () => {
    await host.evaluate("true", scope);
    const pid = host.pid as number;
    // $distinct compares every pair inside one built-in call: JSONata's own time limit is not checked there.
    const items = Array.from({ length: 200_000 }, (_, i) => i);
    // A timer of this process keeps firing while the condition runs: evaluation never holds this event
    // loop. (Had it run here, the answer would reach this test before any timer could fire.)
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    const runaway = host.evaluate("$count($distinct(params.items)) > 0", { params: { items }, steps: {} });
    try {
      await expect(runaway).rejects.toThrow(/failed: it ran longer than 1000 ms and was stopped$/);
    } finally {
      clearInterval(ticker);
    }
    expect(ticks).toBeGreaterThan(0);
    await gone(pid);
    // The next condition gets a fresh process.
    expect(await host.evaluate('params.city = "Oslo"', scope)).toBe(true);
    expect(host.pid).not.toBe(pid);
  });

  it("replaces a process killed from outside between conditions", async () => {
    await host.evaluate("true", scope);
    const pid = host.pid as number;
    process.kill(pid, "SIGKILL");
    await gone(pid);
    expect(await host.evaluate('params.city = "Oslo"', scope)).toBe(true);
    expect(host.pid).not.toBe(pid);
  });

  it("runs a condition again on a fresh process when its process is killed from outside while it runs", async () => {
    const patient = new ConditionHost({ wallClockMs: 120_000 });
    try {
      await patient.evaluate("true", scope);
      const pid = patient.pid as number;
      // Long enough that the kill lands while it runs. The answer is the second run's, on a fresh
      // process: its value, or JSONata's own time limit on a slow machine; never "the process ended".
      const items = Array.from({ length: 20_000 }, (_, i) => i);
      const answer = patient.evaluate("$count($distinct(params.items)) = 20000", { params: { items }, steps: {} });
      process.kill(pid, "SIGKILL");
      const outcome = await answer.catch((error: unknown) => (error as Error).message);
      expect(outcome === true || /failed: Evaluation timeout after 500 milliseconds/.test(String(outcome)), String(outcome)).toBe(true);
      expect(patient.pid).not.toBe(pid);
    } finally {
      await patient.close();
    }
  });

  it("fails a condition that cannot be handed over (a value too deep to copy) without touching the process", async () => {
    await host.evaluate("true", scope);
    const pid = host.pid;
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    await expect(host.evaluate("true", { params: { deep }, steps: {} })).rejects.toThrow(
      /failed: the values it reads cannot be handed to the evaluator/,
    );
    expect(await host.evaluate("true", scope)).toBe(true);
    expect(host.pid).toBe(pid);
  });
});

describe("the condition host's limits", () => {
  it("fails a condition that exhausts its process's memory with that cause, and starts another process", async () => {
    // A small heap and a wall clock that cannot come first: the memory cap is what stops this one.
    const host = new ConditionHost({ heapMiB: 64, wallClockMs: 120_000 });
    try {
      await host.evaluate("true", scope);
      const pid = host.pid as number;
      await expect(host.evaluate(EXHAUSTS_MEMORY, scope)).rejects.toThrow(
        /failed: it ran out of memory \(the evaluator's 64 MiB\) and was stopped$/,
      );
      expect(exists(pid)).toBe(false);
      expect(await host.evaluate("1 + 1 = 2", scope)).toBe(true);
      expect(host.pid).not.toBe(pid);
    } finally {
      await host.close();
    }
  });

  it("stops its process on close; what is asked afterwards fails as a shutdown", async () => {
    const host = new ConditionHost();
    await host.evaluate("true", scope);
    const pid = host.pid as number;
    await host.close();
    expect(exists(pid)).toBe(false);
    await expect(host.evaluate("true", scope)).rejects.toBeInstanceOf(RunCancelledError);
    await host.close(); // idempotent
  });

  it("refuses limits that are not positive integers", () => {
    expect(() => new ConditionHost({ wallClockMs: 0 })).toThrow(/wallClockMs must be a positive integer/);
    expect(() => new ConditionHost({ heapMiB: 1.5 })).toThrow(/heapMiB must be a positive integer/);
  });
});
