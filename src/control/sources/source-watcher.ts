import { watch, type FSWatcher } from "chokidar";
import type { Logger } from "pino";

export interface SourceWatcherOptions {
  readonly roots: readonly string[];
  /** Runs one rescan (serialized by the caller). */
  readonly rescan: () => Promise<unknown>;
  readonly logger: Logger;
  /** Quiet time after the last change before the rescan starts, so one save is one rescan. */
  readonly debounceMs: number;
  /** The periodic safety-net rescan; 0 turns it off. */
  readonly intervalMs: number;
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

  constructor(private readonly options: SourceWatcherOptions) {}

  start(): void {
    const { roots, logger } = this.options;
    if (roots.length === 0) return;
    this.watcher = watch([...roots], {
      ignoreInitial: true,
      // Links are never followed (a skill folder with one is blocked anyway).
      followSymlinks: false,
      // Skill folders are at most a few levels deep (docs/skill-sources.md#safety).
      depth: 10,
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
    this.options.rescan().catch((error: unknown) => this.options.logger.error({ err: error, trigger }, "skill directory rescan failed"));
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.interval) clearInterval(this.interval);
    await this.watcher?.close();
  }
}
