import type { Readable } from "node:stream";
import type { Logger } from "pino";
import type { DockerEngineClient } from "./docker-engine-client.js";

/** Wait before following the events again after the stream was lost (the engine is probably down). */
const RECONNECT_MS = 1_000;
/** Kill signals remembered at most; a run forgets its container's entry when it ends. */
const MAX_REMEMBERED = 1_024;

/** What the watch knew when a run started: compared with {@link EngineWatch.outageSince} at its end. */
export interface WatchMark {
  readonly generation: number;
  readonly connected: boolean;
}

/**
 * Follows the engine's `kill` and `oom` events for this instance's containers, mainly to tell a
 * run that the engine or an operator cut short (an engine shutdown stops every container with
 * SIGTERM; `docker stop`/`kill`) from a run that the skill ended itself, which look the same from
 * the exit code alone (docs/skill-lifecycle.md#what-counts-against-a-skill). The service kills
 * containers only with SIGKILL on timeout or cancellation, and those runs are judged before this
 * watch is asked. The stream ending means the engine went away: every run that was in flight
 * then overlapped an outage. `oom` events back up the engine's OOM flag, which can be set late.
 */
export class EngineWatch {
  private generation = 0;
  private connected = false;
  private stream: Readable | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;
  /** Container id → the signal a kill sent it. */
  private readonly kills = new Map<string, string>();
  /** Containers in which the kernel's OOM killer struck. */
  private readonly ooms = new Set<string>();

  constructor(
    private readonly engine: DockerEngineClient,
    private readonly labels: readonly string[],
    private readonly logger: Logger,
  ) {}

  /** Starts following (again); harmless when already following. */
  start(): void {
    if (this.closed || this.stream || this.retry) return;
    void this.follow();
  }

  mark(): WatchMark {
    return { generation: this.generation, connected: this.connected };
  }

  /**
   * True when the watch was following at `mark` and has lost the engine since (now or for a
   * while in between). Unknown (not following at `mark`) is false: the other checks decide.
   */
  outageSince(mark: WatchMark): boolean {
    return mark.connected && (!this.connected || this.generation !== mark.generation);
  }

  /** The signal of a kill the engine reported for this container, if any. */
  killSignal(containerId: string): string | undefined {
    return this.kills.get(containerId);
  }

  /** Whether the engine reported an OOM kill inside this container. */
  oomSeen(containerId: string): boolean {
    return this.ooms.has(containerId);
  }

  forget(containerId: string): void {
    this.kills.delete(containerId);
    this.ooms.delete(containerId);
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.stream?.destroy();
  }

  private async follow(): Promise<void> {
    let stream: Readable;
    try {
      stream = await this.engine.events(this.labels, ["kill", "oom"]);
    } catch (error) {
      this.logger.debug({ err: error }, "cannot follow the engine's events yet");
      this.scheduleRetry();
      return;
    }
    if (this.closed) {
      stream.destroy();
      return;
    }
    this.stream = stream;
    this.connected = true;
    let pending = "";
    stream.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) this.onEvent(line);
    });
    const lost = (): void => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      this.connected = false;
      this.generation++;
      if (!this.closed)
        this.logger.warn("lost the engine's event stream (the engine went away?); runs in flight are not the skills' fault");
      this.scheduleRetry();
    };
    stream.on("end", lost);
    stream.on("close", lost);
    stream.on("error", lost);
  }

  private onEvent(line: string): void {
    if (line.trim() === "") return;
    try {
      const event = JSON.parse(line) as { Action?: string; Actor?: { ID?: string; Attributes?: Record<string, string> } };
      const id = event.Actor?.ID;
      if (!id) return;
      if (this.kills.size + this.ooms.size >= MAX_REMEMBERED) {
        // A run forgets its container's entries; these are leftovers of runs that never asked.
        this.kills.clear();
        this.ooms.clear();
      }
      if (event.Action === "kill") this.kills.set(id, event.Actor?.Attributes?.signal ?? "?");
      else if (event.Action === "oom") this.ooms.add(id);
    } catch {
      this.logger.debug({ line: line.slice(0, 200) }, "unreadable engine event");
    }
  }

  private scheduleRetry(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.start();
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
