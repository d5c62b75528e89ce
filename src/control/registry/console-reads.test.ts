import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY } from "./skill-health.js";
import { SkillRegistry } from "./skill-registry.js";

const DAY = 86_400_000;

/** The reads behind the console's timeline, windows and durations (docs/console.md#health-timeline), on a real SQLite file. */
describe("SkillRegistry reads for the console", () => {
  let root: string;
  let registry: SkillRegistry;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "registry-console-test-"));
    registry = SkillRegistry.open(path.join(root, "registry.db"), DEFAULT_HEALTH_POLICY);
    for (const version of [1, 2]) {
      registry.commitVersion(
        {
          name: "s",
          version,
          description: "d",
          parametersSchema: "{}",
          testPayload: "{}",
          origin: "register",
          contentHash: "h".repeat(64),
          createdAt: new Date(version * DAY),
        },
        { owner: "local", visibility: "private" },
      );
    }
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  const record = (version: number, at: number, success: boolean, durationMs: number) =>
    registry.recordInvocation({
      name: "s",
      version,
      at: new Date(at),
      success,
      durationMs,
      exitCode: success ? 0 : 1,
      timedOut: false,
      oomKilled: false,
      errorSummary: "",
      caller: "local",
    });

  it("groups invocations by UTC day and version, from a day on", () => {
    record(1, 10 * DAY + 5, true, 10);
    record(1, 10 * DAY + 7, false, 20);
    record(1, 11 * DAY + 1, true, 30);
    record(2, 11 * DAY + 2, true, 40);
    record(2, 12 * DAY - 1, false, 50); // the last millisecond of day 11
    record(2, 9 * DAY, true, 60); // before the range
    expect(registry.dailyOutcomes("s", new Date(10 * DAY))).toEqual([
      { day: new Date(10 * DAY), version: 1, invocations: 2, successes: 1 },
      { day: new Date(11 * DAY), version: 1, invocations: 1, successes: 1 },
      { day: new Date(11 * DAY), version: 2, invocations: 2, successes: 1 },
    ]);
  });

  it("gives each version's recent durations, and each key's latest outcomes oldest first", () => {
    for (let i = 0; i < 5; i++) record(1, DAY + i, i % 2 === 0, 100 + i);
    record(2, 2 * DAY, false, 7);
    expect(registry.durationsByVersion("s", 3)).toEqual(
      new Map([
        [1, [104, 103, 102]],
        [2, [7]],
      ]),
    );
    const outcomes = registry.recentOutcomes(
      [
        { name: "s", version: 1 },
        { name: "absent", version: 1 },
      ],
      3,
    );
    expect(outcomes.get("s")).toEqual([true, false, true]);
    expect(outcomes.get("absent")).toEqual([]);
  });

  it("keeps the end of a failed run's stderr, from a whole line, and finds each caller's last failure", () => {
    const run = (caller: string, success: boolean, stderr: string, errorSummary = "") =>
      registry.recordInvocation({
        name: "s",
        version: 2,
        at: new Date(3 * DAY),
        success,
        durationMs: 1,
        exitCode: success ? 0 : 1,
        timedOut: false,
        oomKilled: false,
        errorSummary,
        caller,
        stderrTail: stderr,
      });
    expect(registry.lastFailure("s")).toBeUndefined();
    const long = `${"noise line\n".repeat(400)}Traceback (most recent call last):\nZeroDivisionError: division by zero\n`;
    run("alice", false, long, "ZeroDivisionError: division by zero");
    run("bob", false, "ValueError: bob's\n", "ValueError: bob's");
    run("alice", true, "a warning on a success is not kept\n");
    const last = registry.lastFailure("s");
    expect([last?.caller, last?.errorSummary, last?.stderrTail]).toEqual(["bob", "ValueError: bob's", "ValueError: bob's\n"]);
    const alices = registry.lastFailure("s", "alice");
    expect(alices?.errorSummary).toBe("ZeroDivisionError: division by zero");
    // The last 2,048 characters, begun at a line: "…" says it was cut, the exception line is there.
    expect(alices?.stderrTail?.length).toBeLessThanOrEqual(2049);
    expect(alices?.stderrTail).toMatch(/^…noise line\n/);
    expect(alices?.stderrTail?.endsWith("ZeroDivisionError: division by zero\n")).toBe(true);
    expect(registry.invocations("s", 1)[0]?.stderrTail).toBeUndefined();
  });
});
