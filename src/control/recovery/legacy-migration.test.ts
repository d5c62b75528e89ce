import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../registry/index.js";
import { CanonicalStore, contentHash } from "../store/index.js";
import { migrateLegacySkills, MIGRATION_MARKER_FILE } from "./legacy-migration.js";
import { reconcile } from "./reconcile.js";

const logger = pino({ level: "silent" });

const ADD = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(args['a'] + args['b'])\n";
const ECHO = "import sys\nprint(sys.argv[1])\n";
const OLD = "print('retired long ago')\n";
const ADD_SCHEMA = { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] };

describe("migration from legacy sandbox storage (real SQLite file, real directories)", () => {
  let root: string;
  let sandboxDir: string;
  let legacyDir: string;
  let home: string;
  let registry: SkillRegistry;
  let store: CanonicalStore;
  const now = new Date("2025-01-02T03:04:05.000Z");

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "legacy-migration-test-"));
    sandboxDir = path.join(root, "sandbox");
    legacyDir = path.join(sandboxDir, "acquired_skills");
    home = path.join(root, "home");
    await mkdir(legacyDir, { recursive: true });
    await mkdir(home, { recursive: true });
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
    store = new CanonicalStore(home);
    await store.init();
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  const migrate = () => migrateLegacySkills({ sandboxDir, registry, store, logger, now });

  async function writeLegacy(files: Record<string, string | Buffer>, index?: unknown): Promise<void> {
    for (const [file, content] of Object.entries(files)) {
      await mkdir(path.dirname(path.join(legacyDir, file)), { recursive: true });
      await writeFile(path.join(legacyDir, file), content);
    }
    if (index !== undefined) await writeFile(path.join(legacyDir, "skills_registry.json"), JSON.stringify(index));
  }

  /** Bytes and mtimes of everything under the legacy directory. */
  async function snapshotLegacy(): Promise<Record<string, string>> {
    const snapshot: Record<string, string> = {};
    for (const entry of await readdir(legacyDir, { recursive: true, withFileTypes: true })) {
      const file = path.join(entry.parentPath, entry.name);
      const info = await lstat(file);
      snapshot[path.relative(legacyDir, file)] = info.isFile()
        ? `${info.mtimeMs}:${(await readFile(file)).toString("hex")}`
        : String(info.mode);
    }
    return snapshot;
  }

  /** Registry row, active file and history agree for each skill. */
  async function expectConsistent(names: string[]): Promise<void> {
    for (const name of names) {
      const skill = registry.get(name);
      expect(skill, name).toBeDefined();
      if (!skill) continue;
      const location = skill.status === "retired" ? "retired" : skill.status === "deleted" ? "trash" : "active";
      const active = await store.readActive(name, location);
      expect(active, `${name}.py`).toBeDefined();
      expect(contentHash(active ?? "")).toBe(skill.contentHash);
      expect(await store.readVersion(name, 1, location)).toBe(active);
      expect(registry.versions(name).map((v) => [v.version, v.contentHash, v.origin])).toEqual([[1, skill.contentHash, "migrate"]]);
    }
  }

  it("does nothing when there is no legacy directory", async () => {
    await rm(legacyDir, { recursive: true });
    const report = await migrate();
    expect(report).toMatchObject({ migrated: [], skipped: [], legacyDirFound: false, alreadyPopulated: false });
    expect(registry.isEmpty()).toBe(true);
  });

  it("migrates .py files with the metadata of a legacy index keyed by name", async () => {
    await writeLegacy(
      { "add_numbers.py": ADD, "echo.py": ECHO, "old_tool.py": OLD, "notes.txt": "not a skill" },
      {
        add_numbers: {
          description: "Adds two numbers",
          parameters_schema: ADD_SCHEMA,
          status: "active",
          usage_count: 7,
          failure_count: 1,
          content_hash: contentHash(ADD),
          test_payload: '{"a": 1, "b": 2}',
          created_at: "2024-06-01T10:00:00Z",
        },
        old_tool: { description: "Retired by the legacy system", status: "retired", failure_count: 4 },
      },
    );
    const before = await snapshotLegacy();

    const report = await migrate();

    expect(report).toMatchObject({ legacyDirFound: true, alreadyPopulated: false, skipped: [], warnings: [] });
    expect(report.migrated).toEqual(["add_numbers", "echo", "old_tool"]);
    const add = registry.get("add_numbers");
    expect(add).toMatchObject({
      description: "Adds two numbers",
      status: "active",
      version: 1,
      usageCount: 7,
      failureCount: 1,
      autoCreated: true,
      protected: false,
      testPayload: '{"a": 1, "b": 2}',
      createdAt: new Date("2024-06-01T10:00:00Z"),
    });
    expect(JSON.parse(add?.parametersSchema ?? "")).toEqual(ADD_SCHEMA);
    expect(registry.get("echo")).toMatchObject({
      description: "Migrated from legacy sandbox storage (echo.py)",
      parametersSchema: '{"type":"object"}',
      testPayload: "{}",
      status: "active",
      usageCount: 0,
      failureCount: 0,
      autoCreated: true,
    });
    // A skill the legacy system retired stays retired (restorable), in retired/.
    expect(registry.get("old_tool")).toMatchObject({ status: "retired", failureCount: 4, statusReason: "retired in the legacy system" });
    expect(await store.readActive("old_tool")).toBeUndefined();
    expect(await store.readActive("old_tool", "retired")).toBe(OLD);
    expect(registry.list().map((s) => s.name)).toEqual(["add_numbers", "echo"]);

    await expectConsistent(report.migrated);
    expect(await snapshotLegacy()).toEqual(before);
    expect(await stat(path.join(store.directory, MIGRATION_MARKER_FILE)).catch(() => undefined)).toBeUndefined();
    // The reconciliation that follows at start-up finds nothing to repair.
    expect(await reconcile(registry, store, logger, now)).toMatchObject({
      relocated: [],
      restoredActive: [],
      orphansMovedAside: [],
      uncommittedVersionsRemoved: [],
      unrecoverable: [],
    });
  });

  it.each([
    ["{skills: [...]}", (entries: Array<Record<string, unknown>>) => ({ skills: entries })],
    [
      "{skills: {...}}",
      (entries: Array<Record<string, unknown>>) => ({ skills: Object.fromEntries(entries.map(({ name, ...rest }) => [name, rest])) }),
    ],
    ["a bare list", (entries: Array<Record<string, unknown>>) => entries],
  ])("accepts a legacy index shaped as %s", async (_shape, shape) => {
    await writeLegacy(
      { "add_numbers.py": ADD, "echo.py": ECHO },
      shape([
        {
          name: "add_numbers",
          description: "Adds two numbers",
          parameters_schema: JSON.stringify(ADD_SCHEMA),
          usage_count: 3,
          hash: createHash("sha256").update(ADD).digest("hex").slice(0, 16),
          test_payload: { a: 2, b: 3 },
        },
        { name: "echo", description: "Echoes its payload", failure_count: 2, status: "degraded" },
      ]),
    );
    const report = await migrate();
    expect(report.migrated).toEqual(["add_numbers", "echo"]);
    expect(report.warnings).toEqual([]);
    expect(registry.get("add_numbers")).toMatchObject({ description: "Adds two numbers", usageCount: 3, testPayload: '{"a":2,"b":3}' });
    expect(JSON.parse(registry.get("add_numbers")?.parametersSchema ?? "")).toEqual(ADD_SCHEMA);
    expect(registry.get("echo")).toMatchObject({ description: "Echoes its payload", failureCount: 2, status: "degraded" });
    await expectConsistent(report.migrated);
  });

  it("migrates with defaults and a warning when the legacy index is not JSON or a field is unusable", async () => {
    await writeLegacy({ "echo.py": ECHO });
    await writeFile(path.join(legacyDir, "skills_registry.json"), "{ not json");
    const report = await migrate();
    expect(report.migrated).toEqual(["echo"]);
    expect(report.warnings.join("\n")).toMatch(/not valid JSON/);
    expect(registry.get("echo")?.description).toBe("Migrated from legacy sandbox storage (echo.py)");
  });

  it("replaces an unusable legacy schema by the default", async () => {
    await writeLegacy({ "echo.py": ECHO }, { echo: { parameters_schema: { type: "string" }, usage_count: -3, created_at: "yesterday" } });
    const report = await migrate();
    expect(report.migrated).toEqual(["echo"]);
    expect(report.warnings).toEqual([expect.stringMatching(/^echo: legacy parameters schema unusable/)]);
    expect(registry.get("echo")).toMatchObject({ parametersSchema: '{"type":"object"}', usageCount: 0 });
  });

  it("is a no-op the second time, and leaves the legacy files in place", async () => {
    await writeLegacy({ "echo.py": ECHO });
    expect((await migrate()).migrated).toEqual(["echo"]);
    await writeLegacy({ "later.py": "print('added after the migration')\n" });
    const before = await snapshotLegacy();

    const second = await migrate();

    expect(second).toMatchObject({ migrated: [], skipped: [], alreadyPopulated: true, legacyDirFound: true });
    expect(registry.list({ includeInactive: true }).map((s) => s.name)).toEqual(["echo"]);
    expect(await snapshotLegacy()).toEqual(before);
  });

  it("does nothing when the canonical store already holds skills, even with an empty registry", async () => {
    await writeLegacy({ "echo.py": ECHO });
    await store.writeActive("kept", "print('canonical')\n", "retired"); // awaits a rebuild, not a migration
    const report = await migrate();
    expect(report).toMatchObject({ migrated: [], alreadyPopulated: true });
    expect(registry.isEmpty()).toBe(true);
    expect(await store.readActive("echo")).toBeUndefined();
  });

  it("does nothing when the registry already holds skills", async () => {
    await writeLegacy({ "echo.py": ECHO });
    await store.writeVersion("mine", 1, "print(1)\n");
    registry.commitVersion(
      {
        name: "mine",
        version: 1,
        description: "d",
        parametersSchema: '{"type":"object"}',
        testPayload: "{}",
        contentHash: contentHash("print(1)\n"),
        origin: "register",
        createdAt: now,
      },
      { owner: "local", visibility: "private" },
    );
    await store.writeActive("mine", "print(1)\n");
    expect(await migrate()).toMatchObject({ migrated: [], alreadyPopulated: true });
    expect(registry.get("echo")).toBeUndefined();
  });

  it("skips symlinked, oversized, badly named, non-UTF-8 and altered files, saying why", async () => {
    const outside = path.join(root, "host-secret.py");
    await writeFile(outside, "SECRET = 'host file'\n");
    await writeLegacy(
      {
        "good.py": ECHO,
        "big.py": `# ${"x".repeat(100 * 1024)}\n`,
        "bad name.py": ECHO,
        "9lives.py": ECHO,
        "latin1.py": Buffer.from([0x23, 0x20, 0xe9, 0x0a]),
        "tampered.py": "print('changed inside the sandbox')\n",
        "__init__.py": "",
        "empty.py": "   \n",
      },
      { tampered: { content_hash: contentHash("print('the original')\n") }, ghost: { description: "no file" } },
    );
    await symlink(outside, path.join(legacyDir, "evil.py"));
    await mkdir(path.join(legacyDir, "dir.py"));

    const report = await migrate();

    expect(report.migrated).toEqual(["good"]);
    const reasons = Object.fromEntries(report.skipped.map((s) => [s.file, s.reason]));
    expect(reasons).toEqual({
      "evil.py": expect.stringMatching(/symbolic link/),
      "big.py": expect.stringMatching(/bytes; the limit is 102400/),
      "bad name.py": expect.stringMatching(/not a valid skill name/),
      "9lives.py": expect.stringMatching(/not a valid skill name/),
      "latin1.py": "is not valid UTF-8",
      "tampered.py": expect.stringMatching(/does not match the hash/),
      "__init__.py": expect.stringMatching(/not a skill/),
      "empty.py": "is empty",
      "dir.py": "is not a regular file",
      "ghost.py": expect.stringMatching(/no such file/),
    });
    expect(registry.list({ includeInactive: true }).map((s) => s.name)).toEqual(["good"]);
    expect(await store.readActive("evil")).toBeUndefined();
    expect(await readFile(outside, "utf8")).toBe("SECRET = 'host file'\n");
  });

  it("does not follow a legacy directory that is a symlink", async () => {
    const elsewhere = path.join(root, "elsewhere");
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, "echo.py"), ECHO);
    await rm(legacyDir, { recursive: true });
    await symlink(elsewhere, legacyDir);
    const report = await migrate();
    expect(report).toMatchObject({ migrated: [], legacyDirFound: true });
    expect(report.skipped).toEqual([{ file: ".", reason: expect.stringMatching(/symbolic link; not followed/) }]);
    expect(registry.isEmpty()).toBe(true);
  });

  it("takes skills from the legacy retired/ directory as retired", async () => {
    await writeLegacy({ "echo.py": ECHO, "retired/old_tool.py": OLD, "retired/echo.py": "print('older echo')\n" });
    const report = await migrate();
    expect(report.migrated).toEqual(["echo", "old_tool"]);
    expect(report.skipped).toEqual([{ file: "retired/echo.py", reason: expect.stringMatching(/duplicate/) }]);
    expect(registry.get("old_tool")?.status).toBe("retired");
    expect(await store.readActive("echo")).toBe(ECHO);
    await expectConsistent(report.migrated);
  });

  it("resumes a migration that a crash interrupted", async () => {
    await writeLegacy({ "a_first.py": "print('a')\n" });
    expect((await migrate()).migrated).toEqual(["a_first"]);
    // As if the process died after the first skill: the second is not copied, the marker remains.
    await writeLegacy({ "b_second.py": "print('b')\n" });
    await writeFile(path.join(store.directory, MIGRATION_MARKER_FILE), "{}\n");

    const resumed = await migrate();

    expect(resumed).toMatchObject({ alreadyPopulated: false, migrated: ["b_second"] });
    expect(resumed.skipped).toEqual([{ file: "a_first.py", reason: expect.stringMatching(/interrupted/) }]);
    expect(await stat(path.join(store.directory, MIGRATION_MARKER_FILE)).catch(() => undefined)).toBeUndefined();
    await expectConsistent(["a_first", "b_second"]);
    expect(await migrate()).toMatchObject({ alreadyPopulated: true, migrated: [] });
  });
});
