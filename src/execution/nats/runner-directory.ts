import type { EngineHealth } from "../sandbox-runner.js";
import type { RunnerStatus } from "./wire.js";

/** Beats a runner may miss before the control plane counts it gone (docs/execution-hosts.md#heartbeats). */
export const MISSED_BEATS = 3;

interface Entry {
  readonly status: RunnerStatus;
  readonly seenAt: number;
}

/**
 * The runners the control plane has heard from lately, as they last described themselves. Feeds
 * health (is there a runner with a working engine?), the metrics per runner, and dispatch (wait
 * for a runner with room instead of failing at once when all are busy).
 */
export class RunnerDirectory {
  private readonly entries = new Map<string, Entry>();
  private readonly roomWaiters = new Set<() => void>();

  constructor(private readonly now: () => number = Date.now) {}

  heard(status: RunnerStatus): void {
    if (status.gone) {
      this.entries.delete(status.runner);
      return;
    }
    this.entries.set(status.runner, { status, seenAt: this.now() });
    if (hasRoom(status)) for (const wake of [...this.roomWaiters]) wake();
  }

  /** Runners heard within the last {@link MISSED_BEATS} of their own beats, by name. */
  live(): RunnerStatus[] {
    const now = this.now();
    const live: RunnerStatus[] = [];
    for (const [name, entry] of this.entries) {
      if (entry.seenAt < now - MISSED_BEATS * entry.status.heartbeatMs) this.entries.delete(name);
      else live.push(entry.status);
    }
    return live.sort((a, b) => a.runner.localeCompare(b.runner));
  }

  /** Resolves true when a runner reports room, false after `timeoutMs` or when `signal` aborts. */
  waitForRoom(timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const finish = (room: boolean): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.roomWaiters.delete(onRoom);
        resolve(room);
      };
      const onRoom = (): void => finish(true);
      const onAbort = (): void => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      this.roomWaiters.add(onRoom);
    });
  }

  /** Ready when at least one live runner has a working engine and is not stopping. */
  health(busConnected: boolean): EngineHealth {
    if (!busConnected) return { ready: false, detail: "the message bus cannot be reached; runs answer UNAVAILABLE until it can" };
    const live = this.live();
    const serving = live.filter((status) => status.engineReady && !status.stopping);
    const slots = serving.reduce((sum, status) => sum + status.slots, 0);
    const free = serving.reduce((sum, status) => sum + Math.max(0, status.slots - status.busy), 0);
    if (serving.length === 0) {
      const why = live.length === 0 ? "no runner is connected to the bus" : live.map(describe).join("; ");
      return { ready: false, detail: `no runner can take runs: ${why}; start one (npm run runner)` };
    }
    return {
      ready: true,
      detail: `${serving.length} of ${live.length} runners serving, ${free} of ${slots} slots free: ${live.map(describe).join("; ")}`,
    };
  }
}

export function hasRoom(status: RunnerStatus): boolean {
  return status.engineReady && !status.stopping && status.busy < status.slots;
}

function describe(status: RunnerStatus): string {
  if (status.stopping) return `${status.runner} stopping`;
  if (!status.engineReady) return `${status.runner} engine not ready (${status.engineDetail})`;
  return `${status.runner} ${status.busy}/${status.slots} busy`;
}
