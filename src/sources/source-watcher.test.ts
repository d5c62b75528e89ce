import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { FSWatcher } from "chokidar";
import pino from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { eventually } from "../../test/support/poll.js";
import { SourceWatcher } from "./source-watcher.js";

describe("SourceWatcher", () => {
  let root: string | undefined;
  let watcher: SourceWatcher | undefined;

  afterEach(async () => {
    await watcher?.close();
    vi.restoreAllMocks();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("hands every folder a scan finds to the file watcher, so an edit inside one it did not see into is a rescan; never in a loop", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "source-watcher-"));
    root = dir;
    const haiku = path.join(dir, "haiku");
    // The real chokidar, watched: how many times the folder is handed to it.
    const add = vi.spyOn(FSWatcher.prototype, "add");
    const handovers = (): number => add.mock.calls.filter(([paths]) => [paths].flat().includes(haiku)).length;
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
        const entries = await readdir(dir, { withFileTypes: true });
        scans++;
        return { folders: entries.filter((e) => e.isDirectory()).map((e) => path.join(dir, e.name)) };
      },
    });
    watcher.start();
    await eventually("the rescan after the watcher's first walk", () => (scans > 0 ? true : undefined));

    await mkdir(haiku);
    await writeFile(path.join(haiku, "SKILL.md"), "---\nname: haiku\n---\none\n");
    await eventually("the scan that finds the new folder to hand it to the watcher", () => (handovers() > 0 ? true : undefined));
    const afterFolder = scans;

    // Chokidar sets up its watch inside the folder asynchronously after the handover, and an edit
    // made before that raises no event: the edit is made again until a rescan follows one. A
    // watcher that never looked inside the folder would see none of them.
    let edits = 0;
    await eventually(
      "a rescan after an edit inside the folder",
      async () => {
        if (scans > afterFolder) return true;
        edits++;
        await writeFile(path.join(haiku, "SKILL.md"), `---\nname: haiku\n---\nedit ${edits}, longer\n`);
        return undefined;
      },
      { intervalMs: 500 },
    );
    // Never in a loop: the scan after the edit found the folder again and did not hand it over
    // again (a watcher that did would rescan once more for each handover, for ever).
    expect(handovers()).toBe(1);
  }, 120_000);
});
