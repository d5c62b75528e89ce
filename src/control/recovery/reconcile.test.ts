import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../registry/index.js";
import { CanonicalStore, contentHash } from "../store/index.js";
import { reconcile } from "./reconcile.js";

const logger = pino({ level: "silent" });

describe("reconcile after a crash (real SQLite file, real directory)", () => {
  let root: string;
  let registry: SkillRegistry;
  let store: CanonicalStore;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "reconcile-test-"));
    registry = SkillRegistry.open(path.join(root, "registry.db"), DEFAULT_HEALTH_POLICY);
    store = new CanonicalStore(root);
    await store.init();
  });
  afterEach(async () => {
    registry.close();
    await rm(root, { recursive: true, force: true });
  });

  /** The registry's commit of `code` as the next version of `name` (files are the caller's). */
  function commit(name: string, code: string): number {
    const version = registry.nextVersion(name);
    registry.commitVersion(
      {
        name,
        version,
        description: "d",
        parametersSchema: "{}",
        testPayload: "{}",
        origin: "register",
        contentHash: contentHash(code),
        createdAt: new Date(),
      },
      { owner: "local", visibility: "private" },
    );
    return version;
  }

  /** A registration that completed every step. */
  async function registerFully(name: string, code: string): Promise<void> {
    await store.writeVersion(name, registry.nextVersion(name), code);
    commit(name, code);
    await store.writeActive(name, code);
  }

  it("reports nothing when registry and store agree", async () => {
    await registerFully("a", "print('a')");
    const report = await reconcile(registry, store, logger);
    expect(report).toMatchObject({ restoredActive: [], orphansMovedAside: [], uncommittedVersionsRemoved: [], unrecoverable: [] });
  });

  it("removes the version file of a registration that crashed before its commit", async () => {
    await registerFully("a", "print('v1')");
    await store.writeVersion("a", 2, "print('v2')"); // crash here: no row for v2
    await store.writeVersion("ghost", 1, "print('never committed')");
    const report = await reconcile(registry, store, logger);
    expect(report.uncommittedVersionsRemoved.sort()).toEqual(["a@2", "ghost@1"]);
    expect(await store.readVersion("a", 2)).toBeUndefined();
    expect(await store.readActive("a")).toBe("print('v1')");
  });

  it("restores the active file of a registration that crashed after its commit", async () => {
    await registerFully("a", "print('v1')");
    const version = registry.nextVersion("a");
    await store.writeVersion("a", version, "print('v2')");
    commit("a", "print('v2')");
    // crash here: <name>.py still holds v1
    const report = await reconcile(registry, store, logger);
    expect(report.restoredActive).toEqual(["a"]);
    expect(await store.readActive("a")).toBe("print('v2')");
  });

  it("puts a committed version's history back from its staged file when a host crash lost the rename after the commit", async () => {
    await registerFully("a", "print('v1')");
    // Staged while the test ran (file and name fsynced), committed, then the host went down before
    // the rename into .versions/a/2.py reached the disk: the rename is simply not done here.
    await store.stageVersion("a", "print('v2')");
    commit("a", "print('v2')");
    // And a staged file of a registration that never committed: nothing to put back.
    await store.stageVersion("a", "print('never committed')");

    const report = await reconcile(registry, store, logger);
    expect(report.historyRestoredFromStaging).toEqual(["a@2"]);
    expect(report.tempFilesRemoved).toBe(2);
    expect(report.unrecoverable).toEqual([]);
    expect(await store.readVersion("a", 2)).toBe("print('v2')");
    expect(await store.readActive("a")).toBe("print('v2')");
    expect((await readdir(store.directory)).filter((f) => f.startsWith(".tmp-"))).toEqual([]);
    // A second start finds nothing more to do.
    expect((await reconcile(registry, store, logger)).historyRestoredFromStaging).toEqual([]);
  });

  it("restores a deleted or tampered active file from history", async () => {
    await registerFully("a", "print('a')");
    await registerFully("b", "print('b')");
    await rm(store.activePath("a"));
    await writeFile(store.activePath("b"), "import os; os.system('evil')");
    const report = await reconcile(registry, store, logger);
    expect(report.restoredActive.sort()).toEqual(["a", "b"]);
    expect(await store.readActive("b")).toBe("print('b')");
  });

  it("moves active files the registry does not know aside instead of deleting them", async () => {
    await registerFully("a", "print('a')");
    await writeFile(store.activePath("stray"), "print('stray')");
    const report = await reconcile(registry, store, logger);
    expect(report.orphansMovedAside).toHaveLength(1);
    expect(await readFile(report.orphansMovedAside[0] as string, "utf8")).toBe("print('stray')");
    expect(await store.activeNames()).toEqual(["a"]);
  });

  it("removes temp files of interrupted atomic writes", async () => {
    await registerFully("a", "print('a')");
    await writeFile(path.join(store.directory, ".tmp-a.py-123456"), "partial");
    const report = await reconcile(registry, store, logger);
    expect(report.tempFilesRemoved).toBe(1);
    expect((await readdir(store.directory)).filter((f) => f.startsWith(".tmp-"))).toEqual([]);
  });

  it("reports a skill whose code exists nowhere, and leaves a lost registry's files alone", async () => {
    await registerFully("a", "print('a')");
    await rm(store.activePath("a"));
    await rm(store.versionPath("a", 1));
    expect((await reconcile(registry, store, logger)).unrecoverable).toEqual(["a"]);

    const emptyRegistry = SkillRegistry.open(path.join(root, "lost.db"), DEFAULT_HEALTH_POLICY);
    await writeFile(store.activePath("b"), "print('b')");
    const report = await reconcile(emptyRegistry, store, logger);
    emptyRegistry.close();
    expect(report.registryEmptyButStorePopulated).toBe(true);
    expect(await store.readActive("b")).toBe("print('b')");
  });
});
