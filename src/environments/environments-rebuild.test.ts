import { mkdirSync, rmSync, utimesSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { environmentsFixture, type EnvironmentsFixture } from "../../test/support/environments-fixture.js";
import { treeDigest, writeWheel } from "../../test/support/wheelhouse.js";
import { FailedPreconditionError } from "../errors/index.js";

/** Locks at work (docs/packages.md#rebuilds): a lost environment comes back file for file, and nothing else is accepted. */
let fx: EnvironmentsFixture;
beforeEach(() => {
  fx = environmentsFixture();
});
afterEach(() => fx.close());

describe("rebuilding from the lock", () => {
  it("a lost directory is rebuilt on next use with the same files, even when the source offers newer ones", async () => {
    const environments = fx.environments();
    const built = await environments.ensure({ requirements: ["tiny-pkg"] });
    if (built === undefined) throw new Error("expected an environment");
    expect(built.lock.map((e) => e.version)).toEqual(["2.0"]);
    const before = treeDigest(built.hostPath);
    expect(Object.keys(before)).toContain("site/tiny_pkg/__pycache__/__init__.cpython-311.pyc");

    // A newer release appears; then the environment's directory is lost (a disk swap, an operator's rm).
    writeWheel(fx.wheelhouse, { name: "tiny-pkg", version: "3.0", files: { "tiny_pkg/__init__.py": "VALUE = 3\n" } });
    rmSync(built.hostPath, { recursive: true, force: true });
    expect((await environments.list()).map((e) => e.status)).toEqual(["missing"]);

    const again = await fx.environments().ensure({ requirements: ["tiny-pkg"] });
    expect(again?.id).toBe(built.id);
    expect(again?.lock).toEqual(built.lock);
    expect(treeDigest(built.hostPath)).toEqual(before);
    expect(fx.counts.built).toEqual(["declarations", "lock"]);
    expect((await environments.list()).map((e) => e.status)).toEqual(["ready"]);
  });

  it("by id, for a run whose version names it", async () => {
    const built = await fx.environments().ensure({ requirements: ["needs-old"] });
    if (built === undefined) throw new Error("expected an environment");
    const before = treeDigest(built.hostPath);
    rmSync(built.hostPath, { recursive: true, force: true });
    const again = await fx.environments().ensureById(built.id);
    expect(again).toEqual(built);
    expect(treeDigest(built.hostPath)).toEqual(before);
    await expect(fx.environments().ensureById("0".repeat(32))).rejects.toBeInstanceOf(FailedPreconditionError);
  });

  it("RebuildEnvironments: missing only, or all of them, each to the same files", async () => {
    const environments = fx.environments();
    const a = await environments.ensure({ requirements: ["tiny-pkg==1.0"] });
    const b = await environments.ensure({ requirements: ["tiny-pkg==2.0"] });
    if (a === undefined || b === undefined) throw new Error("expected environments");
    const digestA = treeDigest(a.hostPath);
    const digestB = treeDigest(b.hostPath);
    rmSync(a.hostPath, { recursive: true, force: true });

    const missing = await environments.rebuild({ missingOnly: true });
    expect(Object.fromEntries(missing.map((o) => [o.id, o.result]))).toEqual({ [a.id]: "rebuilt", [b.id]: "skipped" });
    expect(treeDigest(a.hostPath)).toEqual(digestA);

    const all = await environments.rebuild({ missingOnly: false });
    expect(all.map((o) => o.result)).toEqual(["rebuilt", "rebuilt"]);
    expect(treeDigest(a.hostPath)).toEqual(digestA);
    expect(treeDigest(b.hostPath)).toEqual(digestB);
    expect(fx.counts.built).toEqual(["declarations", "declarations", "lock", "lock", "lock"]);
    expect(fx.entries()).toEqual([a.id, b.id].sort());
  });

  it("a file that changed at the source is refused: the environment is marked failed and its lock kept", async () => {
    const environments = fx.environments();
    const built = await environments.ensure({ requirements: ["tiny-pkg==1.0"] });
    if (built === undefined) throw new Error("expected an environment");
    rmSync(built.hostPath, { recursive: true, force: true });
    // The same name and version, other bytes.
    writeWheel(fx.wheelhouse, { name: "tiny-pkg", version: "1.0", files: { "tiny_pkg/__init__.py": "VALUE = 'changed'\n" } });

    const error = await environments.ensure({ requirements: ["tiny-pkg==1.0"] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FailedPreconditionError);
    expect((error as Error).message).toContain("different sha256");
    expect(fx.counts.failed).toEqual(["hash-mismatch"]);
    const [row] = await environments.list();
    expect(row).toMatchObject({ id: built.id, status: "failed", lock: built.lock });
    expect(row?.error).toContain("different sha256");
    expect(fx.entries()).toEqual([]);
  });
});

describe("removing environments no version uses", () => {
  it("after the grace period, keeping referenced ones; orphan directories and stale build directories go too", async () => {
    let now = new Date("2030-01-01T00:00:00Z");
    const environments = fx.environments({}, () => now);
    const used = await environments.ensure({ requirements: ["tiny-pkg==1.0"] });
    const unused = await environments.ensure({ requirements: ["tiny-pkg==2.0"] });
    if (used === undefined || unused === undefined) throw new Error("expected environments");
    const orphan = path.join(fx.root, "f".repeat(32));
    const staleBuild = path.join(fx.root, ".build-abc-123");
    mkdirSync(orphan);
    mkdirSync(staleBuild);
    const longAgo = new Date("2029-01-01T00:00:00Z");
    utimesSync(orphan, longAgo, longAgo);
    utimesSync(staleBuild, longAgo, longAgo);

    const hour = 3600_000;
    expect(await environments.removeUnused([used.id], hour)).toEqual(["f".repeat(32)]);
    expect(fx.entries()).toEqual([used.id, unused.id].sort());

    now = new Date(now.getTime() + 2 * hour);
    expect(await environments.removeUnused([used.id], hour)).toEqual([unused.id]);
    expect(fx.entries()).toEqual([used.id]);
    expect((await environments.list()).map((e) => e.id)).toEqual([used.id]);
    expect(fx.counts.bytes).toBe((await environments.list())[0]?.sizeBytes);
  });
});

describe("CheckRuntimes", () => {
  it("reports the sandbox's and the installer's Python, and the wheelhouse", async () => {
    const check = await fx.environments().checkRuntimes();
    expect(check.sandboxPython).toBe("3.11.2");
    expect(check.installerPython).toMatch(/^3\.\d+\.\d+$/);
    expect(check.pip).toMatch(/^pip \d+/);
    expect(check.pythonMatches).toBe(check.installerPython?.startsWith("3.11.") === true);
    expect(check.packageSource).toEqual({ kind: "wheelhouse", location: fx.wheelhouse, reachable: true, detail: "3 wheels" });
    expect(check.debian.available).toBe(true);

    const none = await fx.environments({ wheelhouse: undefined }).checkRuntimes();
    expect(none.packageSource).toMatchObject({ kind: "none", reachable: false });
  });
});
