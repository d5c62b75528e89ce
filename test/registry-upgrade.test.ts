import { copyFile, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../src/control/index.js";
import { LearningStore } from "../src/learning/index.js";
import { LessonStore } from "../src/playbook/index.js";
import { QualityCounters } from "../src/routing/index.js";
import { DERIVED_INDEX_TABLES, REGISTRY_SCHEMA_VERSION, schemaVersion } from "../src/schema/index.js";
import { KeywordIndex, SqliteVecIndex } from "../src/search/index.js";
import { SourceStore } from "../src/sources/index.js";
import { openRegistryDatabase } from "../src/sqlite/index.js";

/**
 * A registry.db written by the service at commit 76ef3ce, the last release whose stores created
 * their own tables (test/fixtures/registry-76ef3ce/make-fixture.ts says how it was made). Opening
 * it with today's code must lose nothing: docs/architecture.md#registrydbs-schema.
 */
const FIXTURE = path.join(import.meta.dirname, "fixtures", "registry-76ef3ce", "registry.db");

type Rows = Map<string, { columns: string[]; rows: string[] }>;

/** Every row of every plain table (sqlite-vec's virtual tables need their extension; their shadow tables are plain). */
function snapshot(db: Database.Database): Rows {
  const tables = db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")
    .all() as Array<{ name: string }>;
  const rows: Rows = new Map();
  for (const { name } of tables) {
    const columns = (db.prepare("SELECT name FROM pragma_table_info(?)").all(name) as Array<{ name: string }>).map((c) => c.name);
    rows.set(name, { columns, rows: rowsOf(db, name, columns) });
  }
  return rows;
}

function rowsOf(db: Database.Database, table: string, columns: readonly string[]): string[] {
  const list = columns.map((c) => `"${c}"`).join(", ");
  return (db.prepare(`SELECT ${list} FROM "${table}"`).raw().all() as unknown[][])
    .map((row) => JSON.stringify(row.map((value) => (Buffer.isBuffer(value) ? value.toString("base64") : value))))
    .sort();
}

describe("a registry.db written before the one migrations list (real SQLite file from commit 76ef3ce)", () => {
  let root: string;
  let file: string;
  let before: Rows;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "registry-upgrade-"));
    file = path.join(root, "registry.db");
    await copyFile(FIXTURE, file);
    const old = new Database(file, { readonly: true });
    try {
      expect(schemaVersion(old)).toBe(3);
      before = snapshot(old);
    } finally {
      old.close();
    }
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("keeps every row of every table, column by column, and is at the current schema version after opening", () => {
    expect(before.size).toBeGreaterThan(40);
    const db = openRegistryDatabase(file, { durable: true });
    try {
      expect(schemaVersion(db)).toBe(REGISTRY_SCHEMA_VERSION);
      const after = snapshot(db);
      for (const [table, old] of before) {
        // The old columns of each row, as they were; a column added since may sit beside them.
        expect({ table, rows: rowsOf(db, table, old.columns) }).toEqual({ table, rows: old.rows });
        expect(after.get(table)?.columns.slice(0, old.columns.length)).toEqual(old.columns);
      }
      // What the steps added to this file: the parts of large sessions, environments, versions' test files, new columns.
      expect([...after.keys()].filter((t) => !before.has(t)).sort()).toEqual([
        "learning_session_parts",
        "mirror_pending",
        "skill_environments",
        "skill_version_test_files",
      ]);
      expect(after.get("learning_patterns")?.columns).toContain("last_seen");
      expect(after.get("routes")?.columns).toContain("agent");
      expect(after.get("invocation_outcomes")?.columns).toContain("trusted");
    } finally {
      db.close();
    }
  });

  it("answers through today's stores what the old service wrote: skills, versions, grants, sources, lessons, candidates, quality", () => {
    const registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
    const db = openRegistryDatabase(file, { durable: false });
    try {
      // Every skill is marked for the registry mirror: the first start writes each one's own file (docs/operations.md#the-registry-mirror).
      expect(registry.pendingMirrorChanges(1_000).map((c) => c.name)).toEqual(registry.list({ includeInactive: true }).map((s) => s.name));
      const add = registry.get("add_numbers");
      expect(add).toMatchObject({ version: 1, visibility: "public", owner: "local", status: "active", usageCount: 1 });
      const echo = registry.get("echo_text");
      expect(echo).toMatchObject({ version: 2, latestVersion: 2, protected: true, visibility: "internal" });
      expect(echo?.grants.map((g) => [g.granteeKind, g.grantee])).toEqual([["agent", "bob"]]);
      expect(registry.versions("echo_text").map((v) => [v.version, v.origin])).toEqual([
        [1, "register"],
        [2, "patch"],
      ]);
      expect(registry.get("add_then_echo")?.status).toBe("active");
      expect(registry.invocations("add_numbers")).toHaveLength(1);
      expect(registry.outcomes().map((o) => [o.skillName, o.success, o.note])).toEqual([["add_numbers", true, "right sum"]]);

      expect(new SourceStore(db).latest("greet_person")).toMatchObject({ kind: "instructions", version: 1 });
      const lessons = new LessonStore(db).list(undefined, ["active"]);
      expect(lessons.map((l) => l.trigger).sort()).toEqual(["when a CSV has a header row", "when dates cross time zones"]);
      const candidates = new LearningStore(db).candidates(undefined, undefined);
      expect(candidates.map((c) => c.toolSequence.map((s) => s.tool))).toEqual([["echo_text", "add_numbers", "echo_text"]]);
      expect(new QualityCounters(db).get("add_numbers").selections).toBeGreaterThan(0);
    } finally {
      db.close();
      registry.close();
    }
  });

  it("holds, once its search indexes are open, no table but the migrations' and the derived indexes' (and SQLite's own)", async () => {
    const fresh = path.join(root, "fresh.db");
    const freshDb = openRegistryDatabase(fresh, { durable: false });
    const migrated = new Set(
      (freshDb.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((r) => r.name),
    );
    freshDb.close();
    const db = openRegistryDatabase(file, { durable: false });
    try {
      new KeywordIndex(db);
      new KeywordIndex(db, { table: "lesson_keywords" });
      for (const table of ["skill_vectors", "lesson_vectors"]) {
        const vectors = new SqliteVecIndex(db, { table });
        await vectors.ensure(vectors.dimensions ?? 384);
      }
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map(
        (r) => r.name,
      );
      const unexplained = tables.filter(
        (t) => !migrated.has(t) && !t.startsWith("sqlite_") && !DERIVED_INDEX_TABLES.some((prefix) => t.startsWith(prefix)),
      );
      expect(unexplained).toEqual([]);
    } finally {
      db.close();
    }
  });
});
