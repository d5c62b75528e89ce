import { describe, expect, it } from "vitest";
import { DEFAULT_LESSON_DOMAINS } from "../playbook/index.js";
import { ConfigError, loadConfig } from "./load-config.js";

describe("loadConfig: the playbook's settings", () => {
  it("defaults to the documented numbers", () => {
    expect(loadConfig({ HOME: "/home/agent" }).playbook).toEqual({
      minCopiedNgram: 6,
      domains: DEFAULT_LESSON_DOMAINS,
      maxDistance: 0.45,
      contextLimit: 5,
      creditWindowSeconds: 300,
      pruneMinRetrievals: 5,
      pruneMaxDropFraction: 0.25,
      maxLessons: 50,
      stalePenaltyPerDay: 0.01,
      maxStalePenalty: 0.3,
      pruneSweepMinutes: 0,
    });
  });

  it("reads every one from the environment", () => {
    const playbook = loadConfig({
      HOME: "/home/agent",
      SKILL_ENGINE_LESSON_DOMAINS: " coding, cooking ,coding",
      SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE: "0.3",
      SKILL_ENGINE_PLAYBOOK_MAX_LESSONS: "20",
      SKILL_ENGINE_LESSON_PRUNE_SWEEP_MINUTES: "60",
    }).playbook;
    expect(playbook).toMatchObject({ domains: ["coding", "cooking"], maxDistance: 0.3, maxLessons: 20, pruneSweepMinutes: 60 });
  });

  it("refuses values the rules cannot use", () => {
    expect(() => loadConfig({ SKILL_ENGINE_PLAYBOOK_MAX_DISTANCE: "0" })).toThrow(ConfigError);
    expect(() => loadConfig({ SKILL_ENGINE_LESSON_PRUNE_MAX_DROP: "1.5" })).toThrow(/SKILL_ENGINE_LESSON_PRUNE_MAX_DROP/);
    expect(() => loadConfig({ SKILL_ENGINE_LESSON_DOMAINS: "Cooking Tips" })).toThrow(/comma-separated lowercase domain names/);
  });
});
