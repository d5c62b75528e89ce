import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DependencyStore } from "./dependency-store.js";
import { migrateRegistry } from "../../schema/index.js";

describe("DependencyStore.declaring (real SQLite file)", () => {
  let root: string;
  let db: Database.Database;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "dependency-store-test-"));
    db = new Database(path.join(root, "registry.db"));
    migrateRegistry(db);
  });
  afterEach(async () => {
    db.close();
    await rm(root, { recursive: true, force: true });
  });

  it("finds every declaration naming a skill, unpinned or pinned, and no name that merely starts the same", () => {
    const store = new DependencyStore(db);
    store.record("uses_plain", 1, { kind: "plain", dependsOn: ["math"] });
    store.record("uses_pinned", 2, { kind: "composed", dependsOn: ["other", "math@3"] });
    store.record("uses_prefix", 1, { kind: "plain", dependsOn: ["math_extra", "mathx@1"] });
    // "_" is a LIKE wildcard: a name with one must match exactly, not as a pattern.
    store.record("uses_underscore", 1, { kind: "plain", dependsOn: ["a_b"] });
    store.record("uses_axb", 1, { kind: "plain", dependsOn: ["axb@2"] });
    expect(store.declaring("math")).toEqual([
      { name: "uses_pinned", version: 2 },
      { name: "uses_plain", version: 1 },
    ]);
    expect(store.declaring("a_b")).toEqual([{ name: "uses_underscore", version: 1 }]);
    expect(store.declaring("nothing")).toEqual([]);
  });
});
