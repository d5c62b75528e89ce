import { link, lstat, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutputFile } from "../../gen/skillengine/v1/execution.js";
import { byteSize } from "../../units/index.js";
import { unsafeOutputPath, writeOutputFiles } from "./file-transfer.js";

const returned = (filePath: string, text: string): OutputFile => ({
  path: filePath,
  sizeBytes: Buffer.byteLength(text),
  sha256: "",
  content: Buffer.from(text),
  truncated: false,
  mediaType: "text/plain",
});

describe("skillctl writes returned files as untrusted (real files in a temp folder)", () => {
  let root: string;
  let out: string;
  let outside: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skillctl-files-"));
    out = path.join(root, "out");
    outside = path.join(root, "outside");
    await mkdir(outside);
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("writes each file at its path under the folder, making directories", async () => {
    const outcomes = await writeOutputFiles(out, [returned("a.txt", "A"), returned("deep/er/b.txt", "B")], false);
    expect(outcomes.map((o) => [o.writtenTo, o.refused])).toEqual([
      [path.join(out, "a.txt"), undefined],
      [path.join(out, "deep", "er", "b.txt"), undefined],
    ]);
    expect(await readFile(path.join(out, "deep", "er", "b.txt"), "utf8")).toBe("B");
  });

  it("refuses paths that would leave the folder, even though the service never sends them", async () => {
    for (const bad of ["../escape.txt", "/etc/x", "a/../../b", "a//b", "./a", "", "new\nline"]) expect(unsafeOutputPath(bad)).toBeDefined();
    const outcomes = await writeOutputFiles(out, [returned("../outside/escape.txt", "x"), returned("ok.txt", "ok")], false);
    expect(outcomes[0]?.refused).toBe("a '..' segment in the path");
    expect(outcomes[1]?.writtenTo).toBe(path.join(out, "ok.txt"));
    expect(await readdir(outside)).toEqual([]);
  });

  it("never overwrites an existing file without --force, and says so", async () => {
    await mkdir(out);
    await writeFile(path.join(out, "a.txt"), "mine");
    const [outcome] = await writeOutputFiles(out, [returned("a.txt", "theirs")], false);
    expect(outcome?.refused).toMatch(/exists; not overwritten \(--force replaces it\)/);
    expect(await readFile(path.join(out, "a.txt"), "utf8")).toBe("mine");
  });

  it("follows no link: not a planted directory link, not a link (even a dangling one) at the file's place", async () => {
    await mkdir(out);
    await symlink(outside, path.join(out, "report"));
    await symlink(path.join(outside, "victim.txt"), path.join(out, "chart.svg"));
    const outcomes = await writeOutputFiles(out, [returned("chart.svg", "x"), returned("report/summary.csv", "y")], false);
    expect(outcomes[0]?.refused).toMatch(/exists; not overwritten/);
    expect(outcomes[1]?.refused).toBe(`${path.join(out, "report")} is a symbolic link; not followed`);
    expect(await readdir(outside)).toEqual([]);
  });

  it("with --force replaces a file, a link or a hard link by a new file, never writing through it", async () => {
    await mkdir(out);
    const victim = path.join(outside, "victim.txt");
    await writeFile(victim, "victim");
    await symlink(victim, path.join(out, "soft.txt"));
    await link(victim, path.join(out, "hard.txt"));
    await writeFile(path.join(out, "plain.txt"), "old");
    await symlink(outside, path.join(out, "dir"));
    const outcomes = await writeOutputFiles(
      out,
      [returned("soft.txt", "S"), returned("hard.txt", "H"), returned("plain.txt", "P"), returned("dir/x.txt", "X")],
      true,
    );
    expect(outcomes.map((o) => o.refused)).toEqual([
      undefined,
      undefined,
      undefined,
      `${path.join(out, "dir")} is a symbolic link; not followed`,
    ]);
    expect(await readFile(victim, "utf8")).toBe("victim");
    expect((await lstat(path.join(out, "soft.txt"))).isSymbolicLink()).toBe(false);
    for (const [name, text] of [
      ["soft.txt", "S"],
      ["hard.txt", "H"],
      ["plain.txt", "P"],
    ])
      expect(await readFile(path.join(out, name as string), "utf8")).toBe(text);
    expect((await readdir(out)).filter((name) => name.startsWith("."))).toEqual([]);
  });

  it("says sizes for people", () => {
    expect([byteSize(0), byteSize(1023), byteSize(1536), byteSize(12 * 1024 * 1024), byteSize(300 * 1024 * 1024)]).toEqual([
      "0 B",
      "1023 B",
      "1.5 KiB",
      "12 MiB",
      "300 MiB",
    ]);
  });
});
