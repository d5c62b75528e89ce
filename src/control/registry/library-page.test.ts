import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openRegistryDatabase } from "../../sqlite/index.js";
import { DEFAULT_HEALTH_POLICY } from "./skill-health.js";
import { SkillRegistry } from "./skill-registry.js";

/**
 * The console's library page in one query (docs/console.md#library): filters, the kind joined from
 * the declarations and folder rows, and name cursors both ways, on a real SQLite file.
 */
describe("SkillRegistry.library", () => {
  let root: string;
  let registry: SkillRegistry;
  let db: Database.Database;
  const names = Array.from({ length: 12 }, (_, i) => `s${String(i).padStart(2, "0")}`);

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "registry-library-test-"));
    const file = path.join(root, "registry.db");
    registry = SkillRegistry.open(file, DEFAULT_HEALTH_POLICY);
    for (const [i, name] of names.entries()) {
      registry.commitVersion(
        {
          name,
          version: 1,
          description: "d",
          parametersSchema: "{}",
          testPayload: "{}",
          origin: "register",
          contentHash: "h".repeat(64),
          createdAt: new Date(i),
        },
        { owner: i % 2 === 0 ? "alice" : "bob", visibility: "private" },
      );
    }
    // What composition and the skill folders record beside the registry, in the same file.
    db = openRegistryDatabase(file, { durable: false });
    db.prepare("INSERT INTO skill_dependencies (name, version, kind, depends_on) VALUES (?, 1, 'composed', '[\"s00\"]')").run("s03");
    db.prepare("INSERT INTO skill_dependencies (name, version, kind, depends_on) VALUES (?, 1, 'plain', '[]')").run("s04");
    db.prepare(
      `INSERT INTO skill_source_versions (name, version, skill_id, kind, entrypoint, root, folder, folder_hash, created_at)
       VALUES (?, 1, 'id', ?, '', '/r', ?, 'h', 0)`,
    ).run("s05", "instructions", "/r/s05");
    db.prepare(
      `INSERT INTO skill_source_versions (name, version, skill_id, kind, entrypoint, root, folder, folder_hash, created_at)
       VALUES (?, 1, 'id', ?, 'run.py', '/r', ?, 'h', 0)`,
    ).run("s06", "executable", "/r/s06");
    registry.setStatus("s07", "retired", "test", new Date());
  });

  afterEach(async () => {
    db.close();
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  const page = (options: Parameters<SkillRegistry["library"]>[0]) => registry.library(options).map((r) => `${r.skill.name}:${r.kind}`);

  it("joins each skill's kind: a folder's first, else its active version's declaration, else plain", () => {
    expect(page({ includeInactive: true, limit: 8 })).toEqual([
      "s00:plain",
      "s01:plain",
      "s02:plain",
      "s03:composed",
      "s04:plain",
      "s05:instructions",
      "s06:directory",
      "s07:plain",
    ]);
  });

  it("filters by kind, status and owner in the query", () => {
    expect(page({ kind: "composed" })).toEqual(["s03:composed"]);
    expect(page({ kind: "directory" })).toEqual(["s06:directory"]);
    expect(page({ includeInactive: true, status: "retired" })).toEqual(["s07:plain"]);
    expect(page({ status: "retired" })).toEqual([]);
    expect(page({ owner: "bob", limit: 3 })).toEqual(["s01:plain", "s03:composed", "s05:instructions"]);
    expect(page({ kind: "plain", owner: "alice", after: "s02" })).toEqual(["s04:plain", "s08:plain", "s10:plain"]);
  });

  it("reads a page after a name, and before one (returned in ascending order)", () => {
    expect(page({ after: "s08", limit: 5 })).toEqual(["s09:plain", "s10:plain", "s11:plain"]);
    expect(page({ before: "s05", limit: 2 })).toEqual(["s03:composed", "s04:plain"]);
    expect(page({ before: "s01", limit: 5 })).toEqual(["s00:plain"]);
  });
});
