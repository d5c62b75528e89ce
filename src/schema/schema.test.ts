import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DERIVED_INDEX_TABLES, migrateRegistry, REGISTRY_SCHEMA, REGISTRY_SCHEMA_VERSION, schemaVersion } from "./index.js";

const tablesOf = (db: Database.Database): string[] =>
  (
    db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{
      name: string;
    }>
  ).map((row) => row.name);

/** The rows of docs/architecture.md's schema table: version, concern, tables, summary. */
async function documentedSchema(): Promise<Array<{ version: number; concern: string; tables: string[]; summary: string }>> {
  const doc = await readFile(path.join(import.meta.dirname, "..", "..", "docs", "architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("### registry.db's schema"));
  return [...section.matchAll(/^\| (\d+) \| (\w+) \| (.*?) \| (.*?) \|$/gm)].map((m) => ({
    version: Number(m[1]),
    concern: m[2] as string,
    tables: [...(m[3] as string).matchAll(/`(\w+)`/g)].map((t) => t[1] as string).filter((t) => !/^\(/.test(t)),
    summary: m[4] as string,
  }));
}

describe("registry.db's one migrations list (real SQLite files)", () => {
  let root: string;
  let file: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "schema-test-"));
    file = path.join(root, "registry.db");
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("is what docs/architecture.md lists: each step's concern, summary and the tables it creates, in order", async () => {
    const documented = await documentedSchema();
    expect(documented.map((d) => [d.version, d.concern, d.summary])).toEqual(REGISTRY_SCHEMA.map((m, i) => [i + 1, m.concern, m.summary]));
    const db = new Database(file);
    try {
      let before = new Set<string>();
      for (const [i, migration] of REGISTRY_SCHEMA.entries()) {
        if (migration.sql !== undefined) db.exec(migration.sql);
        migration.apply?.(db);
        const now = tablesOf(db);
        const created = now.filter((t) => !before.has(t)).sort();
        before = new Set(now);
        // Step 2 adds columns only; the doc names the table it changes in words.
        expect([i + 1, created]).toEqual([i + 1, (documented[i]?.tables ?? []).filter(() => created.length > 0).sort()]);
      }
    } finally {
      db.close();
    }
  });

  it("brings a new file to the current version, and a second run changes nothing", () => {
    const db = new Database(file);
    try {
      expect(migrateRegistry(db)).toEqual({ from: 0, to: REGISTRY_SCHEMA_VERSION });
      const tables = tablesOf(db);
      expect(migrateRegistry(db)).toEqual({ from: REGISTRY_SCHEMA_VERSION, to: REGISTRY_SCHEMA_VERSION });
      expect(tablesOf(db)).toEqual(tables);
      expect(schemaVersion(db)).toBe(REGISTRY_SCHEMA_VERSION);
      // No derived index's table is created by the list.
      expect(tables.filter((t) => DERIVED_INDEX_TABLES.some((prefix) => t.startsWith(prefix)))).toEqual([]);
    } finally {
      db.close();
    }
  });

  it("runs each step once when two connections open one file, the second waiting on the first's lock", () => {
    const first = new Database(file);
    const second = new Database(file);
    second.pragma("busy_timeout = 5000");
    try {
      migrateRegistry(first);
      expect(migrateRegistry(second)).toEqual({ from: REGISTRY_SCHEMA_VERSION, to: REGISTRY_SCHEMA_VERSION });
      expect(schemaVersion(second)).toBe(REGISTRY_SCHEMA_VERSION);
    } finally {
      first.close();
      second.close();
    }
  });

  it("stops at the step that failed, with the steps before it kept and the failed one undone", () => {
    const db = new Database(file);
    try {
      // A file where the playbook's table exists in a shape its index cannot use: that step fails as a whole.
      db.exec("CREATE TABLE lessons (id TEXT PRIMARY KEY)");
      expect(() => migrateRegistry(db)).toThrow(/owner|no such column/);
      expect(schemaVersion(db)).toBe(REGISTRY_SCHEMA.findIndex((m) => m.concern === "playbook"));
      expect(tablesOf(db)).not.toContain("lesson_retrievals");
      expect(tablesOf(db)).toContain("skill_source_versions");
    } finally {
      db.close();
    }
  });

  it("refuses a file written by a newer release, naming both versions", () => {
    const db = new Database(file);
    try {
      db.pragma(`user_version = ${REGISTRY_SCHEMA_VERSION + 1}`);
      expect(() => migrateRegistry(db)).toThrow(
        `registry.db is at schema version ${REGISTRY_SCHEMA_VERSION + 1}, newer than this service's ${REGISTRY_SCHEMA_VERSION}`,
      );
      expect(tablesOf(db)).toEqual([]);
    } finally {
      db.close();
    }
  });
});
