import { lstat, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, type SkillRecord, SkillRegistry, type VersionOrigin } from "../registry/index.js";
import { CanonicalStore, contentHash, locationOf, MIRROR_DIR, MirrorWriter } from "../store/index.js";
import { rebuildRegistry, RebuildRefusedError } from "./rebuild-registry.js";
import { reconcile } from "./reconcile.js";

const logger = pino({ level: "silent" });
const policy = DEFAULT_HEALTH_POLICY;

/** Everything a rebuild promises to restore, per skill. */
function comparable(registry: SkillRegistry, skill: SkillRecord) {
  return {
    name: skill.name,
    status: skill.status,
    statusReason: skill.statusReason,
    version: skill.version,
    latestVersion: skill.latestVersion,
    contentHash: skill.contentHash,
    description: skill.description,
    parametersSchema: skill.parametersSchema,
    testPayload: skill.testPayload,
    protected: skill.protected,
    autoCreated: skill.autoCreated,
    usageCount: skill.usageCount,
    failureCount: skill.failureCount,
    createdAt: skill.createdAt,
    lastInvokedAt: skill.lastInvokedAt,
    owner: skill.owner,
    visibility: skill.visibility,
    system: skill.system,
    enabled: skill.enabled,
    disabledBy: skill.disabledBy,
    grants: skill.grants,
    versions: registry.versions(skill.name),
  };
}

function snapshot(registry: SkillRegistry) {
  return registry.list({ includeInactive: true }).map((skill) => comparable(registry, skill));
}

describe("rebuilding registry.db from the canonical store (real SQLite files, real directories)", () => {
  let home: string;
  let dbFile: string;
  let registry: SkillRegistry;
  let store: CanonicalStore;
  let clock: number;
  const tick = (): Date => new Date((clock += 60_000));

  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), "rebuild-registry-test-"));
    dbFile = path.join(home, "registry.db");
    registry = SkillRegistry.open(dbFile, policy);
    store = new CanonicalStore(home);
    await store.init();
    clock = Date.parse("2025-03-01T00:00:00.000Z");
  });
  afterEach(async () => {
    registry.close();
    await rm(home, { recursive: true, force: true });
  });

  /** What the version gate's commit does (src/control/use-cases/version-gate.ts): history file, registry row, active file. */
  async function commit(
    name: string,
    code: string,
    description: string,
    schema: string,
    payload: string,
    origin: VersionOrigin = "register",
    networkAllow?: string[],
  ) {
    const existing = registry.get(name);
    if (existing && locationOf(existing.status) !== "active") await store.moveSkill(name, locationOf(existing.status), "active", tick());
    const version = registry.nextVersion(name);
    await store.writeVersion(name, version, code);
    const committed = registry.commitVersion(
      {
        name,
        version,
        description,
        parametersSchema: schema,
        testPayload: payload,
        contentHash: contentHash(code),
        origin,
        createdAt: tick(),
        ...(networkAllow ? { networkAllow } : {}),
      },
      { owner: "local", visibility: "private" },
    );
    await store.writeActive(name, code);
    return committed;
  }

  function invoke(name: string, success: boolean): void {
    const skill = registry.get(name) as SkillRecord;
    registry.recordInvocation({
      name,
      version: skill.version,
      at: tick(),
      success,
      durationMs: 12,
      exitCode: success ? 0 : 1,
      timedOut: false,
      oomKilled: false,
      errorSummary: success ? "" : "ValueError: bad",
      caller: "test",
    });
  }

  /** Several skills in every state the registry knows, then the mirror, as the service leaves them. */
  async function buildOriginal(): Promise<void> {
    const objectSchema = '{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}';
    await commit("adder", "print(1)\n", "Adds, first try", '{"type":"object"}', "{}");
    await commit("adder", "print(2)\n", "Adds numbers", objectSchema, '{"x": 1}', "patch");
    await commit("adder", "print(3)\n", "Adds numbers faster", objectSchema, '{"x": 2}');
    invoke("adder", true);
    invoke("adder", true);
    invoke("adder", false);

    // Each version's declared hosts come back with it (docs/security.md#declaring-hosts).
    await commit("rolled", "print('r1')\n", "Rolled back one", '{"type":"object"}', '{"a": 1}', "register", ["api.example.com"]);
    await commit("rolled", "print('r2')\n", "Rolled back two", '{"type":"object"}', '{"a": 2}', "register", ["*.cdn.example.net:8443"]);
    const code = (await store.readVersion("rolled", 1)) as string;
    registry.activateVersion("rolled", 1, tick());
    await store.writeActive("rolled", code);

    await commit("shaky", "import sys; sys.exit(1)\n", "Fails a lot", '{"type":"object"}', "{}");
    for (let i = 0; i < 3; i++) invoke("shaky", false); // degraded after three failures

    await commit("old_tool", "print('old')\n", "Retired one", '{"type":"object"}', "{}");
    await commit("old_tool", "print('old2')\n", "Retired one, v2", '{"type":"object"}', "{}");
    registry.setStatus("old_tool", "retired", "failure_count 3 ≥ 3", tick());
    await store.moveSkill("old_tool", "active", "retired", tick());

    await commit("gone", "print('gone')\n", "Deleted one", '{"type":"object"}', "{}");
    registry.setStatus("gone", "deleted", "deleted by test", tick());
    await store.moveSkill("gone", "active", "trash", tick());

    await commit("pinned", "print('pin')\n", "Pinned one", '{"type":"object"}', "{}", "migrate");
    registry.setProtected("pinned", true, tick());
    invoke("pinned", true);
    // Owners and visibility come back from the mirror too.
    registry.setAccess("pinned", { owner: "alice", visibility: "public" }, tick());
    registry.setAccess("gone", { owner: "bob", visibility: "private" }, tick());
    // Grants (one pinned), system flags and switches too (docs/security.md#grants-and-visibility).
    registry.grant({ name: "adder", granteeKind: "agent", grantee: "bob", version: 2, grantedBy: "local", grantedAt: tick() });
    registry.grant({ name: "adder", granteeKind: "user", grantee: "user-9", version: undefined, grantedBy: "local", grantedAt: tick() });
    registry.setSystem("rolled", true, tick());
    registry.setEnabled("shaky", false, "carol", tick());

    await new MirrorWriter(registry, store, logger).flush();
  }

  async function loseDatabase(): Promise<void> {
    registry.close();
    for (const suffix of ["", "-wal", "-shm"]) await rm(`${dbFile}${suffix}`, { force: true });
  }

  function reopen(): SkillRegistry {
    registry.close();
    registry = SkillRegistry.open(dbFile, policy);
    return registry;
  }

  it("restores every skill exactly from the files and the mirror", async () => {
    await buildOriginal();
    const original = snapshot(registry);
    expect(original.find((s) => s.name === "adder")).toMatchObject({
      visibility: "internal",
      grants: [{ grantee: "bob", version: 2 }, { grantee: "user-9" }],
    });
    expect(original.find((s) => s.name === "shaky")).toMatchObject({ enabled: false, disabledBy: "carol" });
    expect(original.find((s) => s.name === "rolled")?.system).toBe(true);
    expect(original.find((s) => s.name === "rolled")?.versions.map((v) => v.networkAllow)).toEqual([
      ["api.example.com"],
      ["*.cdn.example.net:8443"],
    ]);
    expect(original.map((s) => [s.name, s.status, s.version])).toEqual([
      ["adder", "active", 3],
      ["gone", "deleted", 1],
      ["old_tool", "retired", 2],
      ["pinned", "active", 1],
      ["rolled", "active", 1],
      ["shaky", "degraded", 1],
    ]);
    await loseDatabase();

    const report = await rebuildRegistry({ home, policy, logger });

    expect(report.warnings).toEqual([]);
    expect(report.movedAside).toEqual([]);
    expect(report.rebuilt).toEqual([
      { name: "adder", status: "active", versions: [1, 2, 3], activeVersion: 3 },
      { name: "gone", status: "deleted", versions: [1], activeVersion: 1 },
      { name: "old_tool", status: "retired", versions: [1, 2], activeVersion: 2 },
      { name: "pinned", status: "active", versions: [1], activeVersion: 1 },
      { name: "rolled", status: "active", versions: [1, 2], activeVersion: 1 },
      { name: "shaky", status: "degraded", versions: [1], activeVersion: 1 },
    ]);
    expect(snapshot(reopen())).toEqual(original);
    // The service's start-up check then finds the directory and the registry in agreement.
    expect(await reconcile(registry, store, logger)).toMatchObject({
      relocated: [],
      restoredActive: [],
      orphansMovedAside: [],
      uncommittedVersionsRemoved: [],
      unrecoverable: [],
    });
  });

  it("refuses to replace a registry that holds skills unless forced, and then moves it aside", async () => {
    await buildOriginal();
    const original = snapshot(registry);
    registry.close();

    await expect(rebuildRegistry({ home, policy, logger })).rejects.toThrow(RebuildRefusedError);
    await expect(rebuildRegistry({ home, policy, logger })).rejects.toThrow(/holds 6 skill\(s\).*--force/);

    const report = await rebuildRegistry({ home, policy, logger, force: true, now: new Date("2025-04-05T06:07:08.009Z") });

    expect(report.movedAside).toEqual([path.join(home, "registry.db.bak-2025-04-05T06-07-08-009Z")]);
    const backup = SkillRegistry.open(report.movedAside[0] as string, policy);
    try {
      expect(snapshot(backup)).toEqual(original);
    } finally {
      backup.close();
    }
    expect(snapshot(reopen())).toEqual(original);
    expect((await readdir(home)).filter((f) => f.includes("rebuilding"))).toEqual([]);
  });

  it("refuses while another process holds the registry open (the service is running)", async () => {
    await buildOriginal();
    // This process's own connection stands in for the service's: it holds the WAL index lock.
    await expect(rebuildRegistry({ home, policy, logger, force: true })).rejects.toThrow(/held open by another process/);
    expect(registry.list({ includeInactive: true })).toHaveLength(6);
  });

  it("replaces an empty registry (one a service created after the loss) without --force, keeping it aside", async () => {
    await buildOriginal();
    const original = snapshot(registry);
    await loseDatabase();
    SkillRegistry.open(dbFile, policy).close();

    const report = await rebuildRegistry({ home, policy, logger });

    expect(report.movedAside).toHaveLength(1);
    expect(snapshot(reopen())).toEqual(original);
  });

  it("refuses an unreadable registry unless forced", async () => {
    await buildOriginal();
    const original = snapshot(registry);
    await loseDatabase();
    await writeFile(dbFile, "this is not a database, just garbage bytes ".repeat(200));

    await expect(rebuildRegistry({ home, policy, logger })).rejects.toThrow(/cannot be read.*--force/);
    const report = await rebuildRegistry({ home, policy, logger, force: true });
    expect(report.movedAside).toHaveLength(1);
    expect(snapshot(reopen())).toEqual(original);
  });

  it.each([
    ["missing", async (mirror: string) => rm(mirror, { recursive: true })],
    [
      "corrupt",
      async (mirror: string) => {
        for (const file of await readdir(mirror))
          await writeFile(path.join(mirror, file), '{"format": 1, "skill": {"name": "adder", "desc');
      },
    ],
  ])("recovers names, versions and hashes with defaults when the mirror is %s", async (_state, damage) => {
    await buildOriginal();
    const original = snapshot(registry);
    await loseDatabase();
    await damage(path.join(store.directory, MIRROR_DIR));

    const report = await rebuildRegistry({ home, policy, logger });

    expect(report.warnings[0]).toMatch(/\.registry\//);
    const rebuilt = snapshot(reopen());
    expect(
      rebuilt.map((s) => ({
        name: s.name,
        version: s.version,
        contentHash: s.contentHash,
        versions: s.versions.map((v) => [v.version, v.contentHash]),
      })),
    ).toEqual(
      original.map((s) => ({
        name: s.name,
        version: s.version,
        contentHash: s.contentHash,
        versions: s.versions.map((v) => [v.version, v.contentHash]),
      })),
    );
    // The location still tells retired and deleted apart; everything live comes back active.
    expect(rebuilt.map((s) => [s.name, s.status])).toEqual([
      ["adder", "active"],
      ["gone", "deleted"],
      ["old_tool", "retired"],
      ["pinned", "active"],
      ["rolled", "active"],
      ["shaky", "active"],
    ]);
    for (const skill of rebuilt) {
      expect(skill).toMatchObject({
        parametersSchema: '{"type":"object"}',
        testPayload: "{}",
        usageCount: 0,
        failureCount: 0,
        protected: false,
      });
      expect(skill.description).toMatch(/^Rebuilt from the canonical store/);
      expect(skill.versions.every((v) => v.origin === "rebuild")).toBe(true);
    }
  });

  it("adds an active file that matches no history as a new version and writes its history file", async () => {
    await buildOriginal();
    await store.writeActive("adder", "print('edited by hand')\n");
    await store.writeActive("fresh", "print('no history at all')\n");
    await loseDatabase();

    const report = await rebuildRegistry({ home, policy, logger });

    expect(report.rebuilt.find((s) => s.name === "adder")).toEqual({
      name: "adder",
      status: "active",
      versions: [1, 2, 3, 4],
      activeVersion: 4,
    });
    expect(report.rebuilt.find((s) => s.name === "fresh")).toEqual({ name: "fresh", status: "active", versions: [1], activeVersion: 1 });
    expect(report.warnings.some((w) => w.startsWith("adder: adder.py matches no version"))).toBe(true);
    reopen();
    expect(registry.get("adder")).toMatchObject({ version: 4, contentHash: contentHash("print('edited by hand')\n") });
    expect(registry.version("adder", 4)?.origin).toBe("rebuild");
    expect(await store.readVersion("adder", 4)).toBe("print('edited by hand')\n");
    expect(await store.readVersion("fresh", 1)).toBe("print('no history at all')\n");
    expect((await reconcile(registry, store, logger)).unrecoverable).toEqual([]);
  });

  it("refuses when there is nothing to rebuild from", async () => {
    await loseDatabase();
    await expect(rebuildRegistry({ home, policy, logger })).rejects.toThrow(/nothing to rebuild from/);
    expect(await lstat(dbFile).catch(() => undefined)).toBeUndefined();
  });
});
