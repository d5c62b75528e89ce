import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY } from "./skill-health.js";
import { SkillRegistry } from "./skill-registry.js";

describe("SkillRegistry (real SQLite file)", () => {
  let root: string;
  let registry: SkillRegistry;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "registry-test-"));
    registry = SkillRegistry.open(path.join(root, "registry.db"), DEFAULT_HEALTH_POLICY);
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  const commit = (name: string, version: number) =>
    registry.commitVersion({ name, version, description: "d", parametersSchema: "{}", testPayload: "{}", origin: "register", contentHash: "h".repeat(64), at: new Date(1_000 * version) }, { owner: "local", visibility: "private" });
  const outcome = (name: string, success: boolean) => ({
    name,
    version: 1,
    at: new Date(),
    success,
    durationMs: 5,
    exitCode: success ? 0 : 1,
    timedOut: false,
    oomKilled: false,
    errorSummary: success ? "" : "ValueError: x",
    caller: "local",
  });

  it("numbers versions and refuses a version number that was already taken", () => {
    expect(registry.nextVersion("a")).toBe(1);
    expect(commit("a", 1)).toMatchObject({ version: 1, status: "active", usageCount: 0, failureCount: 0 });
    expect(registry.nextVersion("a")).toBe(2);
    expect(() => commit("a", 1)).toThrow(/concurrent change/);
    expect(commit("a", 2).createdAt.getTime()).toBe(1_000);
  });

  it("applies seed 000's counters: success bumps usage and resets failures; 3 failures in a row degrade", () => {
    commit("a", 1);
    registry.recordInvocation(outcome("a", true));
    registry.recordInvocation(outcome("a", false));
    expect(registry.recordInvocation(outcome("a", false))).toMatchObject({ status: "active", failureCount: 2, usageCount: 1 });
    expect(registry.recordInvocation(outcome("a", false))).toMatchObject({ status: "degraded", failureCount: 3 });
    expect(registry.recordInvocation(outcome("a", true))).toMatchObject({ status: "active", failureCount: 0, usageCount: 2 });
    expect(registry.invocations("a").map((i) => i.success)).toEqual([true, false, false, false, true]);
  });

  it("persists across reopening the file", () => {
    commit("a", 1);
    registry.close();
    registry = SkillRegistry.open(path.join(root, "registry.db"), DEFAULT_HEALTH_POLICY);
    expect(registry.list().map((s) => s.name)).toEqual(["a"]);
  });

  it("deprecates through the rolling window after a full window, and a protected pin prevents it", () => {
    commit("w", 1);
    for (let i = 0; i < 19; i++) registry.recordInvocation({ ...outcome("w", i % 5 === 0), at: new Date(1_000 + i) });
    // 19 samples: the window is not judged yet, only the streak counts.
    expect(registry.get("w")?.status).toBe("degraded");
    const judged = registry.recordInvocation(outcome("w", true)); // 5 of 20 = 25%
    expect(judged).toMatchObject({ status: "deprecated", statusReason: "success rate 25% over the last 20 invocations is below 30%" });
    expect(registry.setProtected("w", true, new Date())).toMatchObject({ status: "active", protected: true });
    expect(registry.get("w")?.healthWarning).toMatch(/below 40%/);
    expect(registry.setProtected("w", false, new Date()).status).toBe("deprecated");
  });

  it("gives a new version a fresh window and counters, and keeps history for rollback", () => {
    commit("v", 1);
    for (let i = 0; i < 20; i++) registry.recordInvocation(outcome("v", false));
    expect(registry.get("v")?.status).toBe("deprecated");
    expect(commit("v", 2)).toMatchObject({ status: "active", failureCount: 0, version: 2, latestVersion: 2 });
    const rolledBack = registry.activateVersion("v", 1, new Date());
    // Version 1's own window still says it is failing.
    expect(rolledBack).toMatchObject({ version: 1, latestVersion: 2, status: "deprecated" });
    expect(registry.versions("v").map((x) => x.version)).toEqual([1, 2]);
  });

  it("restores a retired skill with a fresh failure count", () => {
    commit("r", 1);
    for (let i = 0; i < 3; i++) registry.recordInvocation(outcome("r", false));
    registry.setStatus("r", "retired", "failure_count 3 ≥ 3", new Date());
    expect(registry.list().map((s) => s.name)).not.toContain("r");
    expect(registry.list({ includeInactive: true }).map((s) => s.name)).toContain("r");
    expect(registry.restore("r", "restored", new Date())).toMatchObject({ status: "active", failureCount: 0 });
  });
});
