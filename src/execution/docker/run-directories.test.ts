import { chmod, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink, unlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunDirectories, SKILL_FILE_NAME } from "./run-directories.js";

describe("RunDirectories: host-side handling never follows links planted by sandboxed code", () => {
  let root: string;
  let runs: RunDirectories;
  let sentinelDir: string;
  let sentinel: string;

  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "run-dirs-test-"));
    runs = new RunDirectories(path.join(root, "sandbox"));
    sentinelDir = path.join(root, "host-secrets");
    await mkdir(sentinelDir);
    sentinel = path.join(sentinelDir, "secret.txt");
    await writeFile(sentinel, "do not touch", { mode: 0o600 });
  });
  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("creates a fresh run directory holding only a read-only skill file", async () => {
    const dir = await runs.create("run-1", "print(1)");
    expect(await readFile(path.join(dir, SKILL_FILE_NAME), "utf8")).toBe("print(1)");
    expect((await stat(dir)).mode & 0o777).toBe(0o755);
    expect((await stat(path.join(dir, SKILL_FILE_NAME))).mode & 0o777).toBe(0o444);
    expect((await stat(runs.runsDir)).mode & 0o777).toBe(0o700);
  });

  it("refuses to reuse a run id", async () => {
    await runs.create("run-1", "print(1)");
    await expect(runs.create("run-1", "print(2)")).rejects.toMatchObject({ code: "EEXIST" });
  });

  it("refuses a run directory that is a planted symlink", async () => {
    await mkdir(runs.runsDir, { recursive: true });
    await symlink(sentinelDir, runs.pathOf("run-2"));
    await expect(runs.create("run-2", "print(1)")).rejects.toMatchObject({ code: "EEXIST" });
    expect(await runs.exists("run-2")).toBe(false);
    expect(await readFile(sentinel, "utf8")).toBe("do not touch");
  });

  it("removes links, link farms and locked directories without touching their targets", async () => {
    const dir = await runs.create("run-3", "print(1)");
    await symlink(sentinel, path.join(dir, "file-link"));
    await symlink(sentinelDir, path.join(dir, "dir-link"));
    await symlink("/etc/passwd", path.join(dir, "passwd-link"));
    await mkdir(path.join(dir, "locked"));
    await symlink(sentinel, path.join(dir, "locked", "inner-link"));
    await chmod(path.join(dir, "locked"), 0o000);

    await runs.remove("run-3");

    await expect(lstat(dir)).rejects.toMatchObject({ code: "ENOENT" });
    expect(await readFile(sentinel, "utf8")).toBe("do not touch");
    expect((await stat(sentinel)).mode & 0o777).toBe(0o600);
    expect((await stat(sentinelDir)).isDirectory()).toBe(true);
    expect((await readFile("/etc/passwd", "utf8")).length).toBeGreaterThan(0);
  });

  it("recreates runs/ after the whole sandbox dir was wiped", async () => {
    await runs.create("run-4", "print(1)");
    await rm(path.join(root, "sandbox"), { recursive: true, force: true });
    await runs.create("run-5", "print(1)");
    expect(await runs.exists("run-5")).toBe(true);
  });

  it("places dependency files read-only beside the skill, never through a planted link, never as skill.py or a path", async () => {
    const dir = await runs.create("run-6", "import lib", [{ name: "lib.py", content: "X = 1\n" }]);
    expect(await readFile(path.join(dir, "lib.py"), "utf8")).toBe("X = 1\n");
    expect((await stat(path.join(dir, "lib.py"))).mode & 0o777).toBe(0o444);

    // A warm container's directory: a link planted where a dependency goes is refused, its target untouched.
    await runs.create("run-7", undefined);
    await symlink(sentinel, path.join(runs.pathOf("run-7"), "lib.py"));
    await expect(runs.writeSkill("run-7", "import lib", [{ name: "lib.py", content: "evil" }])).rejects.toMatchObject({ code: "EEXIST" });
    expect(await readFile(sentinel, "utf8")).toBe("do not touch");

    for (const [index, name] of ["skill.py", "../x.py", "a/b.py", "lib.txt", ".hidden.py"].entries()) {
      await expect(runs.create(`run-8-${index}`, "x", [{ name, content: "" }])).rejects.toThrow(/invalid run file name/);
      expect(await runs.exists(`run-8-${index}`)).toBe(false);
    }
  });

  it("reads as not intact once a wipe has unlinked a file it wrote, even while the directory is still there", async () => {
    const dir = await runs.create("run-9", "print(1)", [{ name: "lib.py", content: "X = 1\n" }]);
    expect(await runs.intact("run-9")).toBe(true);
    await unlink(path.join(dir, "lib.py"));
    expect(await runs.exists("run-9")).toBe(true);
    expect(await runs.intact("run-9")).toBe(false);

    // A warm container's directory is intact while empty, and after its hand-over until a file goes.
    await runs.create("run-10", undefined);
    expect(await runs.intact("run-10")).toBe(true);
    await runs.writeSkill("run-10", "print(1)");
    expect(await runs.intact("run-10")).toBe(true);
    await runs.remove("run-10");
    expect(await runs.intact("run-10")).toBe(false);
  });

  it("rejects run ids that could escape runs/", () => {
    for (const id of ["../x", "a/b", "", ".hidden"]) expect(() => runs.pathOf(id)).toThrow(/invalid run id/);
  });
});
