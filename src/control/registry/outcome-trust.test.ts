import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { agreedVerdicts, judgeWindow, leavesOwnRoutes, type Report, type WindowCandidate } from "./outcome-trust.js";
import { DEFAULT_HEALTH_POLICY, windowRate } from "./skill-health.js";
import { SkillRegistry } from "./skill-registry.js";

const policy = DEFAULT_HEALTH_POLICY;

/** Candidates numbered oldest first, so `at` orders them. */
let clock = 0;
const run = (engine: boolean, report?: Partial<Report> & { reporter: string }): WindowCandidate => ({
  at: ++clock,
  tie: clock,
  engine,
  report: report && { source: "explicit", success: false, weight: 1, trusted: false, ...report },
});
const signal = (reporter: string, extra: Partial<Report> = {}): WindowCandidate => ({
  at: ++clock,
  tie: clock,
  engine: undefined,
  report: { source: "implicit", success: false, weight: 0.5, reporter, trusted: false, ...extra },
});
const rateOf = (samples: ReturnType<typeof judgeWindow>) =>
  samples.reduce((n, s) => n + (s.success ? s.weight : 0), 0) / samples.reduce((n, s) => n + s.weight, 0);

describe("whose reports count (pure rule, docs/learning.md#whose-reports-count)", () => {
  it("one non-owner agent's failures on its exit-0 invocations leave the exit codes' verdicts in the shared window", () => {
    const candidates = Array.from({ length: 20 }, () => run(true, { reporter: "mallory" }));
    const window = judgeWindow(candidates, 20, 3);
    expect(window).toHaveLength(20);
    expect(window.every((s) => s.source === "exit_code" && s.success && s.weight === 1)).toBe(true);
  });

  it("two agents are not a quorum; a third agreeing makes every non-owner failure count, each agent's as one vote", () => {
    const mallory = Array.from({ length: 18 }, () => run(true, { reporter: "mallory" }));
    const two = judgeWindow([...mallory, run(true, { reporter: "carol" })], 20, 3);
    expect(rateOf(two)).toBe(1);
    const three = judgeWindow([...mallory, run(true, { reporter: "carol" }), run(true, { reporter: "dave" })], 20, 3);
    expect(three.every((s) => s.source === "explicit" && !s.success)).toBe(true);
    // 18 reports of mallory weigh 1 together; carol's and dave's 1 each.
    expect(three.reduce((n, s) => n + s.weight, 0)).toBeCloseTo(3);
    expect(three.filter((s) => s.weight === 1)).toHaveLength(2);
  });

  it("counted non-owner votes do not outweigh the engine's successes of other callers' runs", () => {
    // 14 exit-0 runs nobody reported on, and 3 agents reporting 2 failures each: 14 / (14 + 3).
    const window = judgeWindow(
      [
        ...Array.from({ length: 14 }, () => run(true)),
        ...["carol", "dave", "erin"].flatMap((reporter) => [run(true, { reporter }), run(true, { reporter })]),
      ],
      20,
      3,
    );
    expect(rateOf(window)).toBeCloseTo(14 / 17);
  });

  it("the owner's (or an admin's) verdicts replace the exit code's at full weight, as before", () => {
    const window = judgeWindow(
      Array.from({ length: 20 }, () => run(true, { reporter: "bob", trusted: true })),
      20,
      3,
    );
    expect(window.every((s) => s.source === "explicit" && !s.success && s.weight === 1)).toBe(true);
  });

  it("a flood of one agent's implicit signals takes no place in the window: the real runs stay in it", () => {
    const runs = Array.from({ length: 20 }, () => run(true));
    const flood = Array.from({ length: 20 }, () => signal("mallory"));
    const window = judgeWindow([...runs, ...flood], 20, 3);
    expect(window).toHaveLength(20);
    expect(window.every((s) => s.source === "exit_code" && s.success)).toBe(true);
    // The owner's own implicit signals are samples of their own, as before.
    const owners = judgeWindow([...runs, signal("bob", { trusted: true })], 20, 3);
    expect(owners[0]).toEqual({ source: "implicit", success: false, weight: 0.5 });
  });

  it("the rule is the same for successes: non-owner successes count over exit-code failures only with a quorum", () => {
    const lone = judgeWindow(
      Array.from({ length: 20 }, () => run(false, { reporter: "mallory", success: true })),
      20,
      3,
    );
    expect(rateOf(lone)).toBe(0);
    expect(agreedVerdicts([run(false, { reporter: "a", success: true }), run(true, { reporter: "b" })], 1)).toEqual(new Set([true, false]));
  });

  it("an agent's own reports leave its own routes once it has enough of them at a rate below the deprecation threshold", () => {
    expect(leavesOwnRoutes({ samples: 2, successes: 0, weight: 2 }, policy)).toBe(false);
    expect(leavesOwnRoutes({ samples: 3, successes: 0, weight: 3 }, policy)).toBe(true);
    // 1 success in 4: 25% < 30%.
    expect(leavesOwnRoutes({ samples: 4, successes: 1, weight: 4 }, policy)).toBe(true);
    expect(leavesOwnRoutes({ samples: 3, successes: 1, weight: 3 }, policy)).toBe(false);
    expect(leavesOwnRoutes({ samples: 0, successes: 0, weight: 0 }, policy)).toBe(false);
  });
});

describe("whose reports count, in the registry (real SQLite file)", () => {
  let root: string;
  let registry: SkillRegistry;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "outcome-trust-test-"));
    registry = SkillRegistry.open(path.join(root, "registry.db"), policy);
    registry.commitVersion(
      {
        name: "convert",
        version: 1,
        description: "d",
        parametersSchema: "{}",
        testPayload: "{}",
        origin: "register",
        contentHash: "h".repeat(64),
        createdAt: new Date(1_000),
      },
      { owner: "bob", visibility: "public" },
    );
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  /** A successful run of `convert` by `caller`, and its invocation id. */
  const invoke = (caller: string): number =>
    registry.recordInvocationWithId({
      name: "convert",
      version: 1,
      at: new Date(),
      success: true,
      durationMs: 5,
      exitCode: 0,
      timedOut: false,
      oomKilled: false,
      errorSummary: "",
      caller,
    }).invocationId;
  const agent = (agentId: string, admin = false) => ({ agentId, admin });
  const fail = (id: number, reporter: { agentId: string; admin: boolean }) =>
    registry.recordExplicitOutcome(id, false, "did not help", reporter, new Date());
  const rate = () => windowRate(registry.window("convert", 1), policy);

  it("20 failures reported by one non-owner leave the skill active for everyone and out of that agent's own routes only", () => {
    let after;
    for (let i = 0; i < 20; i++) after = fail(invoke("mallory"), agent("mallory"));
    expect(after).toMatchObject({ status: "active", healthWarning: "" });
    expect(rate()).toBe(1);
    const own = registry.ownReports("mallory").get("convert");
    expect(own).toMatchObject({ samples: 20, successes: 0 });
    expect(own && leavesOwnRoutes(own, policy)).toBe(true);
    expect(registry.ownReports("alice").size).toBe(0);

    // Two more agents agree: three distinct non-owners, and the window says so.
    fail(invoke("carol"), agent("carol"));
    expect(registry.get("convert")?.status).toBe("active");
    const deprecated = fail(invoke("dave"), agent("dave"));
    expect(deprecated).toMatchObject({ status: "deprecated" });
    expect(rate()).toBe(0);
    expect(registry.window("convert", 1).bySource.find((s) => s.source === "explicit")).toMatchObject({ samples: 20, successes: 0 });
  });

  it("the owner's reports and an admin's count at once, as before", () => {
    const ids = Array.from({ length: 20 }, () => invoke("mallory"));
    // The admin judges mallory's runs: trusted.
    for (const id of ids.slice(0, 15)) fail(id, agent("ops", true));
    expect(registry.get("convert")?.status).toBe("deprecated");

    const mine = Array.from({ length: 20 }, () => invoke("bob"));
    expect(registry.get("convert")?.status).toBe("active");
    let after;
    for (const id of mine.slice(0, 15)) after = fail(id, agent("bob"));
    expect(after).toMatchObject({ status: "deprecated", statusReason: "success rate 25% over the last 20 invocations is below 30%" });
  });

  it("implicit signals by a non-owner are one agent's reports too", () => {
    for (let i = 0; i < 20; i++) invoke("alice");
    for (let i = 0; i < 20; i++) registry.recordSignal("convert", "implicit", false, 0.5, "retried", agent("mallory"), new Date());
    expect(registry.get("convert")?.status).toBe("active");
    expect(registry.window("convert", 1)).toMatchObject({ samples: 20, successes: 20 });
    expect(registry.ownReports("mallory").get("convert")).toMatchObject({ samples: 20, successes: 0, weight: 10 });
  });

  it("mirrored outcomes keep whose they were; outcomes mirrored before the rule are trusted when their reporter owns the skill", async () => {
    const id = invoke("mallory");
    fail(id, agent("mallory"));
    expect(registry.outcomes()).toMatchObject([{ caller: "mallory", trusted: false }]);
    const file = path.join(root, "rebuilt.db");
    const rebuilt = SkillRegistry.open(file, policy);
    try {
      rebuilt.commitVersion(
        {
          name: "convert",
          version: 1,
          description: "d",
          parametersSchema: "{}",
          testPayload: "{}",
          origin: "register",
          contentHash: "h".repeat(64),
          createdAt: new Date(1_000),
        },
        { owner: "bob", visibility: "public" },
      );
      const old = { skillName: "convert", version: 1, source: "explicit" as const, success: false, weight: 1, note: "", at: 5 };
      rebuilt.restoreOutcomes([
        { ...old, caller: "bob" },
        { ...old, caller: "mallory" },
        { ...old, caller: "ops", trusted: true },
      ]);
      expect(rebuilt.outcomes().map((o) => [o.caller, o.trusted])).toEqual([
        ["bob", true],
        ["mallory", false],
        ["ops", true],
      ]);
    } finally {
      rebuilt.close();
    }
  });

  it("migrates the outcomes of a registry from before the rule: the owner's reports stay trusted, other agents' are not", () => {
    const file = path.join(root, "old.db");
    const before = SkillRegistry.open(file, policy);
    before.close();
    // What a registry of the previous schema holds: user_version 3, the table without `trusted`, no packages.
    const old = new Database(file);
    old.exec(`DROP INDEX invocation_outcomes_by_trust; DROP INDEX invocation_outcomes_by_caller;
              ALTER TABLE invocation_outcomes DROP COLUMN trusted;
              DROP INDEX skill_versions_by_environment; DROP TABLE skill_environments;
              ALTER TABLE skill_versions DROP COLUMN requirements; ALTER TABLE skill_versions DROP COLUMN system_packages;
              ALTER TABLE skill_versions DROP COLUMN environment_id; DROP TABLE skill_version_test_files;
              DROP INDEX invocations_by_caller; ALTER TABLE invocations DROP COLUMN output_files;
              ALTER TABLE invocations DROP COLUMN output_file_count; ALTER TABLE invocations DROP COLUMN output_file_bytes;
              ALTER TABLE skill_versions DROP COLUMN secrets; ALTER TABLE skill_versions DROP COLUMN network_allow;
              DROP INDEX invocations_failed; ALTER TABLE invocations DROP COLUMN stderr_tail;
              INSERT INTO skills (name, description, parameters_schema, test_payload, status, version, content_hash, created_at, updated_at,
                                  status_changed_at, owner, visibility)
                VALUES ('convert', 'd', '{}', '{}', 'active', 1, 'h', 1, 1, 1, 'bob', 'public');
              INSERT INTO invocation_outcomes (skill_name, version, invocation_id, source, success, weight, note, caller, at)
                VALUES ('convert', 1, NULL, 'implicit', 0, 0.5, '', 'bob', 1), ('convert', 1, NULL, 'implicit', 0, 0.5, '', 'mallory', 2);
              PRAGMA user_version = 3;`);
    old.close();
    const migrated = SkillRegistry.open(file, policy);
    try {
      expect(migrated.outcomes().map((o) => [o.caller, o.trusted])).toEqual([
        ["bob", true],
        ["mallory", false],
      ]);
    } finally {
      migrated.close();
    }
  });
});
