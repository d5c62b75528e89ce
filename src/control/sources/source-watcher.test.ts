import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SourceWatcher } from "./source-watcher.js";

describe("SourceWatcher", () => {
  let root: string | undefined;
  let watcher: SourceWatcher | undefined;

  afterEach(async () => {
    await watcher?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("hands every folder a scan finds to the file watcher, so an edit inside one it did not see into is a rescan; never in a loop", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "source-watcher-"));
    root = dir;
    let scans = 0;
    // Depth 0 reproduces, every time, what a folder made during the watcher's first walk meets by
    // chance: the root is watched, the folder inside it is not.
    watcher = new SourceWatcher({
      roots: [dir],
      depth: 0,
      debounceMs: 30,
      intervalMs: 0,
      logger: pino({ level: "silent" }),
      rescan: async () => {
        scans++;
        const entries = await readdir(dir, { withFileTypes: true });
        return { folders: entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name)) };
      },
    });
    watcher.start();
    await vi.waitFor(() => expect(scans).toBeGreaterThan(0), { timeout: 10_000 });

    await mkdir(path.join(dir, "haiku"));
    await writeFile(path.join(dir, "haiku", "SKILL.md"), "---\nname: haiku\n---\none\n");
    const settled = async (): Promise<number> => {
      let last = -1;
      while (last !== scans) {
        last = scans;
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      return scans;
    };
    const afterFolder = await settled();

    await writeFile(path.join(dir, "haiku", "SKILL.md"), "---\nname: haiku\n---\ntwo, longer\n");
    await vi.waitFor(() => expect(scans).toBeGreaterThan(afterFolder), { timeout: 10_000 });
    const afterEdit = await settled();
    expect(afterEdit - afterFolder).toBe(1);
  }, 30_000);
});
