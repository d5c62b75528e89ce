import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY } from "./skill-health.js";
import type { SkillAccess } from "./records.js";
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

  const commit = (name: string, version: number, access: SkillAccess = { owner: "local", visibility: "private" }) =>
    registry.commitVersion(
      {
        name,
        version,
        description: "d",
        parametersSchema: "{}",
        testPayload: "{}",
        origin: "register",
        contentHash: "h".repeat(64),
        createdAt: new Date(1_000 * version),
      },
      access,
    );
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

  it("with relaxed telemetry, commits each outcome at once (other connections see it), keeps status changes, and FULL elsewhere", async () => {
    const file = path.join(root, "relaxed.db");
    const relaxed = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY, { telemetrySyncMs: 60_000 });
    try {
      relaxed.commitVersion(
        {
          name: "flaky",
          version: 1,
          description: "d",
          parametersSchema: "{}",
          testPayload: "{}",
          origin: "register",
          contentHash: "h".repeat(64),
          createdAt: new Date(1_000),
        },
        { owner: "local", visibility: "private" },
      );
      for (let i = 0; i < DEFAULT_HEALTH_POLICY.degradeAfterConsecutiveFailures; i++) relaxed.recordInvocation(outcome("flaky", false));
      await relaxed.flushTelemetry();
      const other = new Database(file, { readonly: true });
      try {
        expect(other.prepare("SELECT COUNT(*) AS n FROM invocations").get()).toEqual({
          n: DEFAULT_HEALTH_POLICY.degradeAfterConsecutiveFailures,
        });
        expect(other.prepare("SELECT status FROM skills WHERE name = 'flaky'").get()).toEqual({ status: "degraded" });
        // Only the telemetry commit is relaxed: the connection is back to FULL for everything else.
        expect(relaxed["db"].pragma("synchronous", { simple: true })).toBe(2);
      } finally {
        other.close();
      }
    } finally {
      relaxed.close();
    }
    const reopened = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
    try {
      expect(reopened.get("flaky")).toMatchObject({
        status: "degraded",
        failureCount: DEFAULT_HEALTH_POLICY.degradeAfterConsecutiveFailures,
      });
    } finally {
      reopened.close();
    }
  });

  it("lists names and descriptions (the near-duplicate screen's listing) of exactly the skills list returns, in its order", () => {
    commit("alice_private", 1, { owner: "alice", visibility: "private" });
    commit("alice_public", 1, { owner: "alice", visibility: "public" });
    commit("bob_private", 1, { owner: "bob", visibility: "private" });
    commit("system_private", 1, { owner: "erin", visibility: "private" });
    registry.setSystem("system_private", true, new Date());
    registry.grant({
      name: "alice_private",
      granteeKind: "agent",
      grantee: "carol",
      version: undefined,
      grantedBy: "alice",
      grantedAt: new Date(),
    });
    registry.grant({
      name: "bob_private",
      granteeKind: "user",
      grantee: "dana",
      version: undefined,
      grantedBy: "bob",
      grantedAt: new Date(),
    });
    const cases = [
      {},
      { visibleTo: "bob" },
      { visibleTo: "carol" },
      { visibleTo: "zed", visibleToUser: "dana" },
      { visibleTo: "bob", owner: "alice" },
    ];
    for (const options of cases) {
      expect(registry.describedSkills(options)).toEqual(registry.list(options).map((s) => ({ name: s.name, description: s.description })));
    }
    expect(registry.describedSkills({ visibleTo: "zed", visibleToUser: "dana" }).map((s) => s.name)).toEqual([
      "alice_public",
      "bob_private",
      "system_private",
    ]);
  });

  it("keeps each skill's owner and visibility, lists what an agent may see, and changes access", () => {
    commit("alice_private", 1, { owner: "alice", visibility: "private" });
    commit("alice_public", 1, { owner: "alice", visibility: "public" });
    commit("bob_private", 1, { owner: "bob", visibility: "private" });
    const names = (options: Parameters<SkillRegistry["list"]>[0]) => registry.list(options).map((s) => s.name);
    expect(names({})).toEqual(["alice_private", "alice_public", "bob_private"]);
    expect(names({ visibleTo: "bob" })).toEqual(["alice_public", "bob_private"]);
    expect(names({ visibleTo: "carol" })).toEqual(["alice_public"]);
    expect(names({ visibleTo: "bob", owner: "alice" })).toEqual(["alice_public"]);
    expect(names({ owner: "alice" })).toEqual(["alice_private", "alice_public"]);

    expect(registry.setAccess("bob_private", { owner: "carol", visibility: "public" }, new Date())).toMatchObject({
      owner: "carol",
      visibility: "public",
    });
    expect(names({ visibleTo: "alice" })).toEqual(["alice_private", "alice_public", "bob_private"]);
    // A new version carries the access it is given (the service passes the existing one on).
    expect(commit("bob_private", 2, { owner: "carol", visibility: "private" })).toMatchObject({
      version: 2,
      owner: "carol",
      visibility: "private",
    });
  });

  it("migrates a registry from before identity: its skills belong to the local agent, private", () => {
    const file = path.join(root, "old.db");
    const old = new Database(file);
    old.exec(`CREATE TABLE skills (name TEXT PRIMARY KEY, description TEXT NOT NULL, parameters_schema TEXT NOT NULL, test_payload TEXT NOT NULL,
                status TEXT NOT NULL, status_reason TEXT NOT NULL DEFAULT '', health_warning TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL,
                content_hash TEXT NOT NULL, usage_count INTEGER NOT NULL DEFAULT 0, failure_count INTEGER NOT NULL DEFAULT 0,
                protected INTEGER NOT NULL DEFAULT 0, auto_created INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL, status_changed_at INTEGER NOT NULL, last_invoked_at INTEGER) STRICT;
              CREATE TABLE skill_versions (name TEXT NOT NULL, version INTEGER NOT NULL, description TEXT NOT NULL, parameters_schema TEXT NOT NULL,
                test_payload TEXT NOT NULL, content_hash TEXT NOT NULL, origin TEXT NOT NULL, created_at INTEGER NOT NULL,
                PRIMARY KEY (name, version)) STRICT;
              CREATE TABLE invocations (id INTEGER PRIMARY KEY, skill_name TEXT NOT NULL, version INTEGER NOT NULL, invoked_at INTEGER NOT NULL,
                success INTEGER NOT NULL, duration_ms INTEGER NOT NULL, exit_code INTEGER NOT NULL, timed_out INTEGER NOT NULL,
                oom_killed INTEGER NOT NULL, error_summary TEXT NOT NULL, caller TEXT NOT NULL) STRICT;
              CREATE INDEX invocations_by_skill ON invocations (skill_name, version, id);
              CREATE INDEX invocations_by_time ON invocations (skill_name, invoked_at);
              INSERT INTO skills (name, description, parameters_schema, test_payload, status, version, content_hash, created_at, updated_at, status_changed_at)
                VALUES ('legacy', 'd', '{}', '{}', 'active', 1, 'h', 1, 1, 1);
              PRAGMA user_version = 1;`);
    old.close();
    const migrated = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
    try {
      expect(migrated.get("legacy")).toMatchObject({ owner: "local", visibility: "private", status: "active" });
    } finally {
      migrated.close();
    }
  });

  it("numbers versions and refuses a version number that was already taken", () => {
    expect(registry.nextVersion("a")).toBe(1);
    expect(commit("a", 1)).toMatchObject({ version: 1, status: "active", usageCount: 0, failureCount: 0 });
    expect(registry.nextVersion("a")).toBe(2);
    expect(() => commit("a", 1)).toThrow(/concurrent change/);
    expect(commit("a", 2).createdAt.getTime()).toBe(1_000);
  });

  it("applies the counters: success bumps usage and resets failures; 3 failures in a row degrade", () => {
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
