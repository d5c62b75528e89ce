import { mkdtemp, rm, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_HEALTH_POLICY, SkillRegistry } from "../registry/index.js";
import { CanonicalStore, contentHash, MirrorWriter } from "../store/index.js";
import { rebuildRegistry } from "./rebuild-registry.js";

const logger = pino({ level: "silent" });
const file = (filePath: string, text: string) => ({ path: filePath, content: Buffer.from(text) });

describe("rebuild-registry brings back each version's test files (real SQLite files, real directories)", () => {
  let home: string;
  let store: CanonicalStore;
  let registry: SkillRegistry;
  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), "rebuild-test-files-"));
    store = new CanonicalStore(home);
    await store.init();
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
  });
  afterEach(async () => {
    registry.close();
    await rm(home, { recursive: true, force: true });
  });

  /** What the version gate's commit does: history file and test files, the registry's row, the active file. */
  async function commit(name: string, code: string, files: ReturnType<typeof file>[]): Promise<void> {
    const version = registry.nextVersion(name);
    await store.writeVersion(name, version, code);
    const testFiles = await store.writeTestFiles(name, version, files);
    registry.commitVersion(
      {
        name,
        version,
        description: "sums a CSV",
        parametersSchema: '{"type":"object"}',
        testPayload: '{"csv": "t.csv"}',
        contentHash: contentHash(code),
        origin: "register",
        createdAt: new Date(Date.UTC(2025, 0, version)),
        ...(testFiles.length > 0 ? { testFiles } : {}),
      },
      { owner: "local", visibility: "private" },
    );
    await store.writeActive(name, code);
  }

  async function loseRegistry(): Promise<SkillRegistry> {
    const mirror = new MirrorWriter(registry, store, logger);
    await mirror.flush();
    await mirror.close();
    registry.close();
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(home, `registry.db${suffix}`), { force: true });
    const report = await rebuildRegistry({ home, policy: DEFAULT_HEALTH_POLICY, logger });
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
    warnings = report.warnings;
    return registry;
  }
  let warnings: string[] = [];

  it("restores every version's list from the mirror, checked against the store", async () => {
    await commit("csv_sum", "print(1)\n", [file("t.csv", "value\n1\n"), file("more/u.csv", "value\n2\n")]);
    await commit("csv_sum", "print(2)\n", [file("t.csv", "value\n3\n")]);
    await commit("plain", "print(0)\n", []);
    const before = registry.versions("csv_sum");
    const rebuilt = await loseRegistry();
    expect(warnings).toEqual([]);
    expect(rebuilt.versions("csv_sum").map((v) => v.testFiles)).toEqual(before.map((v) => v.testFiles));
    expect(rebuilt.versions("csv_sum")[0]?.testFiles?.map((t) => t.path)).toEqual(["t.csv", "more/u.csv"]);
    expect(rebuilt.versions("plain")[0]?.testFiles).toBeUndefined();
  });

  it("reports a test file missing, altered or replaced by a link in the store, and leaves it out of the version", async () => {
    await commit("csv_sum", "print(1)\n", [file("t.csv", "value\n1\n"), file("u.csv", "u"), file("w.csv", "w"), file("k.csv", "k")]);
    const dir = store.testFilesDir("csv_sum", 1);
    await unlink(path.join(dir, "u.csv"));
    await unlink(path.join(dir, "w.csv"));
    await writeFile(path.join(dir, "w.csv"), "changed");
    const outside = path.join(home, "k.csv");
    await writeFile(outside, "k");
    await unlink(path.join(dir, "k.csv"));
    await symlink(outside, path.join(dir, "k.csv"));
    const rebuilt = await loseRegistry();
    expect(rebuilt.version("csv_sum", 1)?.testFiles?.map((t) => t.path)).toEqual(["t.csv"]);
    expect(warnings).toEqual([
      "csv_sum: a test file .registry/csv_sum.json lists for v1 is missing or altered in the canonical store (u.csv: missing); the version is rebuilt without it",
      "csv_sum: a test file .registry/csv_sum.json lists for v1 is missing or altered in the canonical store (w.csv: altered (7 bytes; 1 recorded)); the version is rebuilt without it",
      "csv_sum: a test file .registry/csv_sum.json lists for v1 is missing or altered in the canonical store (k.csv: a link, not a file (not followed)); the version is rebuilt without it",
    ]);
  });

  it("takes a version the mirror never recorded with the test files its directory holds", async () => {
    await commit("csv_sum", "print(1)\n", [file("t.csv", "value\n1\n")]);
    const mirror = new MirrorWriter(registry, store, logger);
    await mirror.flush();
    await mirror.close();
    // v2 committed after the mirror's last rewrite (a crash before the next one).
    await commit("csv_sum", "print(2)\n", [file("t.csv", "value\n2\n")]);
    registry.close();
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(home, `registry.db${suffix}`), { force: true });
    const report = await rebuildRegistry({ home, policy: DEFAULT_HEALTH_POLICY, logger });
    registry = SkillRegistry.open(path.join(home, "registry.db"), DEFAULT_HEALTH_POLICY);
    expect(registry.version("csv_sum", 2)?.testFiles?.map((t) => [t.path, t.sizeBytes])).toEqual([["t.csv", 8]]);
    expect(report.warnings).toContain(
      "csv_sum: v2 is not in .registry/csv_sum.json as it is; its 1 test file(s) are taken as the canonical store holds them",
    );
  });
});
