import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CanonicalStore } from "./canonical-store.js";

const sha256 = (text: string): string => createHash("sha256").update(text).digest("hex");
const file = (filePath: string, text: string) => ({ path: filePath, content: Buffer.from(text) });

describe("a version's test files in the canonical store (real directories)", () => {
  let home: string;
  let store: CanonicalStore;
  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), "test-files-store-"));
    store = new CanonicalStore(home);
    await store.init();
  });
  afterEach(async () => {
    // The files are 0444 in directories of 0700: removable by their owner.
    await rm(home, { recursive: true, force: true });
  });

  it("writes them 0444 under .versions/<name>/<n>.test-files/ and reads them back checked, in their order", async () => {
    const entries = await store.writeTestFiles("csv_sum", 3, [file("data/t.csv", "value\n1\n"), file("a.txt", "a")]);
    expect(entries).toEqual([
      { path: "data/t.csv", sizeBytes: 8, sha256: sha256("value\n1\n") },
      { path: "a.txt", sizeBytes: 1, sha256: sha256("a") },
    ]);
    const dir = path.join(store.directory, ".versions", "csv_sum", "3.test-files");
    expect(((await lstat(path.join(dir, "data", "t.csv"))).mode & 0o777).toString(8)).toBe("444");
    expect(((await lstat(path.join(dir, "a.txt"))).mode & 0o777).toString(8)).toBe("444");
    // Nothing but the directory is left beside the history: no temp directory.
    expect(await readdir(path.dirname(dir))).toEqual(["3.test-files"]);
    const reading = await store.readTestFiles("csv_sum", 3, entries);
    expect(reading.problems).toEqual([]);
    expect(reading.files.map((f) => [f.path, f.content.toString()])).toEqual([
      ["data/t.csv", "value\n1\n"],
      ["a.txt", "a"],
    ]);
  });

  it("follows no link planted in the store, and names every file that is missing or altered", async () => {
    const entries = await store.writeTestFiles("csv_sum", 1, [file("t.csv", "value\n1\n"), file("d/u.csv", "u"), file("x.txt", "x")]);
    const dir = store.testFilesDir("csv_sum", 1);
    const outside = path.join(home, "outside.csv");
    await writeFile(outside, "value\n1\n");
    // The same bytes behind a link: still refused, never read through it.
    await rm(path.join(dir, "t.csv"));
    await symlink(outside, path.join(dir, "t.csv"));
    const elsewhere = path.join(home, "elsewhere");
    await mkdir(elsewhere);
    await writeFile(path.join(elsewhere, "u.csv"), "u");
    await rm(path.join(dir, "d"), { recursive: true });
    await symlink(elsewhere, path.join(dir, "d"));
    await rm(path.join(dir, "x.txt"));
    await writeFile(path.join(dir, "x.txt"), "y");
    const reading = await store.readTestFiles("csv_sum", 1, entries);
    expect(reading.files).toEqual([]);
    expect(reading.problems).toEqual([
      "t.csv: a link, not a file (not followed)",
      "d/u.csv: a link is on its way (not followed)",
      "x.txt: altered (its SHA-256 is not the one recorded)",
    ]);
    // A listed path that would leave the directory is never opened.
    const escaping = await store.readTestFiles("csv_sum", 1, [
      { path: "../../../outside.csv", sizeBytes: 8, sha256: sha256("value\n1\n") },
    ]);
    expect(escaping.problems).toEqual(["../../../outside.csv: not a path of ordinary names"]);
  });

  it("replaces what an uncommitted version left at its number, and discarding the version removes its test files", async () => {
    const leftover = store.testFilesDir("csv_sum", 2);
    await mkdir(path.join(store.directory, ".versions", "csv_sum"), { recursive: true });
    await symlink(home, leftover);
    const entries = await store.writeTestFiles("csv_sum", 2, [file("t.csv", "new")]);
    expect((await lstat(leftover)).isDirectory()).toBe(true);
    expect((await store.readTestFiles("csv_sum", 2, entries)).files.map((f) => f.content.toString())).toEqual(["new"]);
    // The link's target was not touched.
    expect((await lstat(home)).isDirectory()).toBe(true);
    await store.discardUncommittedVersion("csv_sum", 2);
    expect(await lstat(leftover).catch(() => undefined)).toBeUndefined();
  });

  it("start-up removes a temp directory a crash left, and lists a directory no list survived without following links", async () => {
    await store.writeTestFiles("csv_sum", 1, [file("b.csv", "b"), file("a/c.csv", "c")]);
    const versions = path.join(store.directory, ".versions", "csv_sum");
    await mkdir(path.join(versions, ".tmp-2.test-files-abcdef"));
    await writeFile(path.join(versions, ".tmp-2.test-files-abcdef", "t.csv"), "half");
    expect(await store.removeStaleTempFiles()).toBe(1);
    expect((await readdir(versions)).sort()).toEqual(["1.test-files"]);
    await symlink("/etc/passwd", path.join(store.testFilesDir("csv_sum", 1), "passwd"));
    const listed = await store.listTestFiles("csv_sum", 1, "active");
    expect(listed?.files.map((f) => [f.path, f.content.toString()])).toEqual([
      ["a/c.csv", "c"],
      ["b.csv", "b"],
    ]);
    expect(listed?.problems).toEqual(["passwd: a link (left out, not followed)"]);
    expect(await store.listTestFiles("csv_sum", 9, "active")).toBeUndefined();
  });
});
