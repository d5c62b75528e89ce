import path from "node:path";
import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";

export interface SourceWatcherOptions {
  readonly roots: readonly string[];
  /** Runs one rescan (serialized by the caller) and says which skill folders it found. */
  readonly rescan: () => Promise<{ readonly folders: readonly string[] }>;
  readonly logger: Logger;
  /** Quiet time after the last change before the rescan starts, so one save is one rescan. */
  readonly debounceMs: number;
  /** The periodic safety-net rescan; 0 turns it off. */
  readonly intervalMs: number;
  /**
   * How many directory levels under a root the watcher walks; skill folders are at most a few
   * levels deep (docs/skill-sources.md#safety). @default 10
   */
  readonly depth?: number;
}

/**
 * Hot reload (docs/skill-sources.md#hot-reload): chokidar watches the skill directories and a
 * change anywhere in them triggers a rescan after `debounceMs` of quiet; a periodic rescan catches
 * what a watcher can miss (network file systems, a watcher limit reached, events lost under load).
 */
export class SourceWatcher {
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private interval: NodeJS.Timeout | undefined;
  private closed = false;
  /** Folders a scan has found before: each is handed to the watcher once, so no rescan loop. */
  private readonly known = new Set<string>();

  constructor(private readonly options: SourceWatcherOptions) {}

  start(): void {
    const { roots, logger } = this.options;
    if (roots.length === 0) return;
    this.watcher = watch([...roots], {
      ignoreInitial: true,
      // Links are never followed (a skill folder with one is blocked anyway).
      followSymlinks: false,
      depth: this.options.depth ?? 10,
    });
    this.watcher.on("all", () => this.schedule());
    // With ignoreInitial, what appears while the watcher's first walk runs is taken as already there
    // and reported by no event: one rescan once the walk is done covers that window.
    this.watcher.on("ready", () => this.schedule());
    this.watcher.on("error", (error: unknown) => logger.warn({ err: error }, "skill directory watcher error; the periodic rescan goes on"));
    if (this.options.intervalMs > 0) {
      this.interval = setInterval(() => this.run("periodic"), this.options.intervalMs);
      this.interval.unref();
    }
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run("change"), this.options.debounceMs);
    this.timer.unref();
  }

  private run(trigger: string): void {
    if (this.closed) return;
    this.options.rescan().then(
      ({ folders }) => this.watchNew(folders),
      (error: unknown) => this.options.logger.error({ err: error, trigger }, "skill directory rescan failed"),
    );
  }

  /**
   * A folder created while the watcher's first walk ran is found by the rescan after it, but
   * chokidar never learns of it and sees no edit inside it (measured: 2 times in 40 for a folder
   * made within 1 ms of the start; more on a loaded host, where it made a test flaky). So each
   * folder a scan finds for the first time is handed to the watcher (chokidar shares its watches:
   * a folder it already sees costs one directory read), and when the watcher did not know the
   * folder at all, one more rescan picks up what changed before it was watched.
   */
  private watchNew(folders: readonly string[]): void {
    const watcher = this.watcher;
    if (watcher === undefined || this.closed) return;
    const found = folders.map((folder) => path.resolve(folder)).filter((folder) => !this.known.has(folder));
    if (found.length === 0) return;
    for (const folder of found) this.known.add(folder);
    const watched = watcher.getWatched();
    const unknown = found.filter((folder) => watched[folder] === undefined);
    watcher.add(found);
    if (unknown.length === 0) return;
    this.options.logger.info({ folders: unknown }, "skill folders the file watcher had not seen: watching them now");
    this.schedule();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.interval) clearInterval(this.interval);
    await this.watcher?.close();
  }
}
