import { describe, expect, it } from "vitest";
import { loadConfig } from "./load-config.js";

describe("loadConfig: the run queue's share per agent", () => {
  it("gives each agent a quarter of the queue, at least one run, unless told otherwise", () => {
    const tokens = { SKILL_ENGINE_TOKENS: "alice=a-token-of-alice,bob=a-token-of-bob" };
    const config = loadConfig({ HOME: "/home/agent", ...tokens });
    expect(config.maxQueuedRunsPerAgent).toBe(16);
    expect(config.maxQueuedRunsByAgent).toEqual(new Map());
    expect(loadConfig({ ...tokens, SKILL_ENGINE_MAX_QUEUED_RUNS: "6" }).maxQueuedRunsPerAgent).toBe(1);
    expect(loadConfig({ ...tokens, SKILL_ENGINE_MAX_QUEUED_RUNS: "0" }).maxQueuedRunsPerAgent).toBe(1);
    expect(loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT: "40" }).maxQueuedRunsPerAgent).toBe(40);
  });

  it("gives the one local agent the whole queue when no tokens are configured", () => {
    expect(loadConfig({ HOME: "/home/agent" }).maxQueuedRunsPerAgent).toBe(64);
    expect(loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS: "6" }).maxQueuedRunsPerAgent).toBe(6);
  });

  it("reads an operator's own number for some agents", () => {
    const config = loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: " batch-bot = 2, ci@build.example=64,frozen=0," });
    expect(config.maxQueuedRunsByAgent).toEqual(
      new Map([
        ["batch-bot", 2],
        ["ci@build.example", 64],
        ["frozen", 0],
      ]),
    );
  });

  it("refuses a malformed list, an agent named twice and a share of none", () => {
    expect(() => loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: "alice:3" })).toThrow(
      /SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT.*agent=runs/,
    );
    expect(() => loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: "-bad=3" })).toThrow(/SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT/);
    expect(() => loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: "alice=3,alice=4" })).toThrow(/"alice" is named twice/);
    expect(() => loadConfig({ SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT: "0" })).toThrow(/SKILL_ENGINE_MAX_QUEUED_RUNS_PER_AGENT/);
  });
});
