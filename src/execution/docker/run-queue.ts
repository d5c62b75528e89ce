import { AgentQueueFullError, QueueFullError, RunCancelledError } from "../../errors/index.js";
import { cancellationOf } from "../sandbox-runner.js";

/** The bounds of a {@link RunQueue}; every field has its documented default in the config. */
export interface RunQueueOptions {
  /** Runs executing at once. */
  readonly concurrency: number;
  /** Runs waiting at most, all agents together. */
  readonly maxQueued: number;
  /** Runs one agent may have waiting, unless {@link maxQueuedByAgent} names it. */
  readonly maxQueuedPerAgent: number;
  /** An operator's own limit for some agents, in place of {@link maxQueuedPerAgent}. */
  readonly maxQueuedByAgent?: ReadonlyMap<string, number>;
}

/** A run waiting for a slot. */
interface Waiter {
  /** Arrival order: among agents never served, the one waiting longest goes first. */
  readonly seq: number;
  /** Hands it the slot just occupied for it. */
  readonly start: () => void;
  /** Takes it out of the running before it started (displaced, cancelled, shut down). */
  readonly refuse: (error: Error) => void;
}

/** What the queue knows of one agent; forgotten once it has nothing running or waiting. */
interface AgentRuns {
  readonly waiting: Waiter[];
  running: number;
  /** When this agent last had a run started, as a count of starts; 0 when none since it was last idle. */
  lastStarted: number;
}

/**
 * A bounded, fair queue in front of the engine (docs/security.md#fair-share-of-the-run-queue): at most
 * `concurrency` runs at once, at most `maxQueued` waiting. Waiting runs are kept per agent, and a freed
 * slot goes to the agent whose last run started longest ago (round robin over the agents with runs
 * waiting), so one agent's burst delays each other agent's run by at most one run per busy agent. Each
 * agent may have its own number of runs waiting; past that, it alone hears RESOURCE_EXHAUSTED. When the
 * whole queue is full, a run of an agent with fewer runs waiting takes the place of the newest run of the
 * agent with the most (at least two more), so an agent is refused for a full queue only when it already
 * has as many waiting as any other, give or take one. A full queue answers at once instead of letting
 * latency grow without bound; a caller that goes away while waiting leaves the queue at once.
 */
export class RunQueue {
  private readonly agents = new Map<string, AgentRuns>();
  private runningCount = 0;
  private waitingCount = 0;
  private starts = 0;
  private arrivals = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly options: RunQueueOptions) {}

  get running(): number {
    return this.runningCount;
  }

  get waiting(): number {
    return this.waitingCount;
  }

  /** Runs of `agentId` waiting now. */
  waitingOf(agentId: string): number {
    return this.agents.get(agentId)?.waiting.length ?? 0;
  }

  /**
   * Runs `task` for `agentId` once a slot is free. Throws `QueueFullError` (an `AgentQueueFullError`
   * when it concerns this agent's share) when the run may not wait, also later if it gives way to another
   * agent's run, and the signal's cancellation when it aborts: while waiting the run leaves the queue;
   * while running the caller hears it at once and the slot stays taken until the task has stopped.
   */
  async submit<T>(agentId: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw cancellationOf(signal);
    if (this.runningCount < this.options.concurrency) this.occupy(agentId);
    else await this.wait(agentId, signal);
    try {
      return await this.runInSlot(agentId, task, signal);
    } catch (error) {
      if (signal?.aborted) throw cancellationOf(signal);
      throw error;
    }
  }

  /** Refuses every waiting run (the service is shutting down); resolves when nothing runs either. */
  async drain(): Promise<void> {
    for (const [agentId, agent] of [...this.agents]) {
      for (const waiter of agent.waiting.splice(0)) {
        this.waitingCount--;
        waiter.refuse(new RunCancelledError("shutdown"));
      }
      this.forgetIfIdle(agentId, agent);
    }
    if (this.runningCount === 0) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Admits the run to wait, or refuses it; resolves once a slot has been occupied for it. */
  private wait(agentId: string, signal: AbortSignal | undefined): Promise<void> {
    const own = this.waitingOf(agentId);
    const limit = this.options.maxQueuedByAgent?.get(agentId) ?? this.options.maxQueuedPerAgent;
    if (own >= limit) throw new AgentQueueFullError(agentId, own, "limit", this.runningCount, this.waitingCount);
    if (this.waitingCount >= this.options.maxQueued) this.makeRoomFor(agentId, own);
    const agent = this.agentRuns(agentId);
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = agent.waiting.indexOf(waiter);
        if (index < 0) return;
        agent.waiting.splice(index, 1);
        this.waitingCount--;
        this.forgetIfIdle(agentId, agent);
        waiter.refuse(cancellationOf(signal as AbortSignal));
      };
      const waiter: Waiter = {
        seq: ++this.arrivals,
        start: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        refuse: (error) => {
          signal?.removeEventListener("abort", onAbort);
          reject(error);
        },
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      agent.waiting.push(waiter);
      this.waitingCount++;
    });
  }

  /**
   * The queue is full: the newest run of the agent with the most runs waiting gives way, if it has at
   * least two more than `agentId` (one more would only swap who is ahead); otherwise `agentId` is refused.
   */
  private makeRoomFor(agentId: string, own: number): void {
    let largest: [string, AgentRuns] | undefined;
    for (const entry of this.agents) {
      if (entry[0] !== agentId && entry[1].waiting.length > (largest?.[1].waiting.length ?? 0)) largest = entry;
    }
    if (!largest || largest[1].waiting.length < own + 2) {
      throw new QueueFullError(this.runningCount, this.waitingCount);
    }
    const [displacedAgent, runs] = largest;
    const refusal = new AgentQueueFullError(displacedAgent, runs.waiting.length, "displaced", this.runningCount, this.waitingCount);
    const displaced = runs.waiting.pop() as Waiter;
    this.waitingCount--;
    displaced.refuse(refusal);
  }

  private async runInSlot<T>(agentId: string, task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    let work: Promise<T>;
    try {
      // Aborted between being handed the slot and getting here: the task is not started at all.
      signal?.throwIfAborted();
      work = task();
    } catch (error) {
      this.release(agentId);
      throw error;
    }
    // The slot is given back when the task has stopped, not when its caller stopped listening: the
    // container of a cancelled run is still being stopped, and counts against the concurrency until then.
    work.then(
      () => this.release(agentId),
      () => this.release(agentId),
    );
    return signal ? untilAborted(work, signal) : work;
  }

  private occupy(agentId: string): void {
    const agent = this.agentRuns(agentId);
    this.runningCount++;
    agent.running++;
    agent.lastStarted = ++this.starts;
  }

  private release(agentId: string): void {
    this.runningCount--;
    const agent = this.agents.get(agentId);
    if (agent) {
      agent.running--;
      this.forgetIfIdle(agentId, agent);
    }
    this.startNext();
    if (this.runningCount === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Fills free slots, each with the oldest waiting run of the agent whose last run started longest ago. */
  private startNext(): void {
    while (this.runningCount < this.options.concurrency && this.waitingCount > 0) {
      let next: [string, AgentRuns] | undefined;
      for (const entry of this.agents) {
        const head = entry[1].waiting[0];
        if (!head) continue;
        if (!next || isBefore(entry[1], head, next[1])) next = entry;
      }
      if (!next) return;
      const [agentId, agent] = next;
      const waiter = agent.waiting.shift() as Waiter;
      this.waitingCount--;
      this.occupy(agentId);
      waiter.start();
    }
  }

  private agentRuns(agentId: string): AgentRuns {
    let agent = this.agents.get(agentId);
    if (!agent) {
      agent = { waiting: [], running: 0, lastStarted: 0 };
      this.agents.set(agentId, agent);
    }
    return agent;
  }

  /**
   * An agent with nothing running or waiting is forgotten, its last start with it: it comes back as
   * the first in line, which is its due after being idle. One that keeps a run going is remembered, so
   * sending the next run while the last still runs never puts it ahead of agents that wait.
   */
  private forgetIfIdle(agentId: string, agent: AgentRuns): void {
    if (agent.running === 0 && agent.waiting.length === 0) this.agents.delete(agentId);
  }
}

/** Whether `candidate` (whose oldest waiting run is `head`) goes before `current`. */
function isBefore(candidate: AgentRuns, head: Waiter, current: AgentRuns): boolean {
  if (candidate.lastStarted !== current.lastStarted) return candidate.lastStarted < current.lastStarted;
  return head.seq < (current.waiting[0] as Waiter).seq;
}

/** `work`, or the signal's cancellation as soon as it aborts, whichever comes first. */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancellationOf(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
