import { describe, expect, it } from "vitest";
import { AgentQueueFullError, QueueFullError, RunCancelledError } from "../../errors/index.js";
import { RunQueue, type RunQueueOptions } from "./run-queue.js";

/** A queue whose tasks start when the queue says so and end when the test says so. */
function harness(options: Partial<RunQueueOptions> = {}) {
  const queue = new RunQueue({ concurrency: 1, maxQueued: 64, maxQueuedPerAgent: 64, ...options });
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const submit = (agentId: string, name: string, signal?: AbortSignal): Promise<string> => {
    const answer = queue.submit(
      agentId,
      () =>
        new Promise<string>((resolve) => {
          started.push(name);
          finishers.set(name, () => resolve(name));
        }),
      signal,
    );
    answer.catch(() => undefined); // observed by the test when it matters
    return answer;
  };
  /** Ends a started run and lets the queue hand its slot on. */
  const finish = async (name: string): Promise<void> => {
    const end = finishers.get(name);
    if (!end) throw new Error(`${name} has not started`);
    end();
    await flush();
  };
  return { queue, started, submit, finish };
}

/** Lets settled promises' callbacks run. */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe("RunQueue", () => {
  it("runs at most `concurrency` at once and counts what runs and what waits", async () => {
    const { queue, started, submit, finish } = harness({ concurrency: 2 });
    const runs = ["a1", "a2", "a3"].map((name) => submit("a", name));
    await flush();
    expect(started).toEqual(["a1", "a2"]);
    expect([queue.running, queue.waiting, queue.waitingOf("a")]).toEqual([2, 1, 1]);
    await finish("a1");
    expect(started).toEqual(["a1", "a2", "a3"]);
    await finish("a2");
    await finish("a3");
    expect(await Promise.all(runs)).toEqual(["a1", "a2", "a3"]);
    expect([queue.running, queue.waiting]).toEqual([0, 0]);
  });

  it("hands freed slots round robin across the agents with runs waiting, whoever sent more", async () => {
    const { started, submit, finish } = harness();
    for (const name of ["a1", "a2", "a3", "a4", "a5"]) void submit("a", name);
    for (const name of ["b1", "b2"]) void submit("b", name);
    void submit("c", "c1");
    await flush();
    for (const name of ["a1", "b1", "c1", "a2", "b2", "a3", "a4"]) await finish(name);
    expect(started).toEqual(["a1", "b1", "c1", "a2", "b2", "a3", "a4", "a5"]);
  });

  it("never puts an agent that sends its next run while its last one runs ahead of an agent that waits", async () => {
    const { started, submit, finish } = harness();
    void submit("a", "a1");
    await flush();
    void submit("b", "b1");
    void submit("a", "a2"); // a1 still runs: a was served last
    await finish("a1");
    expect(started).toEqual(["a1", "b1"]);
    await finish("b1");
    expect(started).toEqual(["a1", "b1", "a2"]);
  });

  it("refuses an agent past its own limit of waiting runs, and only that agent", async () => {
    const { queue, submit } = harness({ maxQueuedPerAgent: 2, maxQueuedByAgent: new Map([["batch", 0]]) });
    void submit("a", "a1");
    void submit("a", "a2");
    void submit("a", "a3");
    await flush();
    const refused = await submit("a", "a4").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AgentQueueFullError);
    expect(refused).toMatchObject({ agentId: "a", agentQueued: 2, reason: "limit", kind: "resource-exhausted" });
    expect((refused as Error).message).toMatch(/queue is full for agent a: it has 2 runs waiting, its limit/);
    // Another agent still waits; one whose own limit is 0 never does.
    void submit("b", "b1");
    await flush();
    expect(queue.waitingOf("b")).toBe(1);
    await expect(submit("batch", "x1")).rejects.toMatchObject({ agentId: "batch", reason: "limit" });
  });

  it("makes room in a full queue for an agent with fewer runs waiting, at the expense of the one with the most", async () => {
    const { queue, started, submit, finish } = harness({ maxQueued: 4, maxQueuedPerAgent: 4 });
    const flood = ["a1", "a2", "a3", "a4", "a5"].map((name) => submit("a", name));
    await flush();
    expect([queue.running, queue.waiting]).toEqual([1, 4]);
    // b has nothing waiting: a's newest run gives way.
    void submit("b", "b1");
    await expect(flood[4]).rejects.toMatchObject({ agentId: "a", reason: "displaced", agentQueued: 4 });
    expect([queue.waitingOf("a"), queue.waitingOf("b")]).toEqual([3, 1]);
    // a has more waiting than b already: a's next run is refused, a plain full queue.
    const refused = await submit("a", "a6").catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(QueueFullError);
    expect(refused).not.toBeInstanceOf(AgentQueueFullError);
    // b's second run still finds room (a: 3 waiting, b: 1); its third does not (a: 2, b: 2).
    void submit("b", "b2");
    await expect(flood[3]).rejects.toMatchObject({ agentId: "a", reason: "displaced" });
    await expect(submit("b", "b3")).rejects.toBeInstanceOf(QueueFullError);
    expect([queue.waitingOf("a"), queue.waitingOf("b"), queue.waiting]).toEqual([2, 2, 4]);
    for (const name of ["a1", "b1", "a2", "b2"]) await finish(name);
    expect(started).toEqual(["a1", "b1", "a2", "b2", "a3"]);
  });

  it("refuses at once when the queue may hold nothing", async () => {
    const { submit } = harness({ maxQueued: 0, maxQueuedPerAgent: 1 });
    void submit("a", "a1");
    await flush();
    await expect(submit("b", "b1")).rejects.toThrow(/queue is full \(1 running, 0 waiting\)/);
  });

  it("lets a caller that goes away while waiting leave the queue at once; its task never starts", async () => {
    const { queue, started, submit, finish } = harness();
    void submit("a", "a1");
    const controller = new AbortController();
    const leaving = submit("b", "b1", controller.signal);
    void submit("c", "c1");
    await flush();
    expect(queue.waiting).toBe(2);
    controller.abort(new RunCancelledError("deadline"));
    await expect(leaving).rejects.toMatchObject({ reason: "deadline" });
    expect([queue.waiting, queue.waitingOf("b")]).toEqual([1, 0]);
    await finish("a1");
    expect(started).toEqual(["a1", "c1"]);
  });

  it("answers a caller that goes away while its run runs at once, and keeps the slot until the task stops", async () => {
    const { queue, started, submit, finish } = harness();
    const controller = new AbortController();
    const cancelled = submit("a", "a1", controller.signal);
    void submit("b", "b1");
    await flush();
    controller.abort();
    await expect(cancelled).rejects.toMatchObject({ reason: "cancelled" });
    expect([queue.running, started]).toEqual([1, ["a1"]]);
    await finish("a1");
    expect(started).toEqual(["a1", "b1"]);
  });

  it("refuses a run whose caller has already gone", async () => {
    const { queue, started, submit } = harness();
    await expect(submit("a", "a1", AbortSignal.abort())).rejects.toBeInstanceOf(RunCancelledError);
    expect([started, queue.running]).toEqual([[], 0]);
  });

  it("gives the slot back when a task throws before returning its promise", async () => {
    const queue = new RunQueue({ concurrency: 1, maxQueued: 1, maxQueuedPerAgent: 1 });
    await expect(
      queue.submit("a", () => {
        throw new Error("no promise");
      }),
    ).rejects.toThrow("no promise");
    expect(queue.running).toBe(0);
    expect(await queue.submit("a", () => Promise.resolve("next"))).toBe("next");
  });

  it("drains: every waiting run hears of the shutdown, and it resolves once nothing runs", async () => {
    const { queue, submit, finish } = harness();
    const running = submit("a", "a1");
    const waiting = [submit("a", "a2"), submit("b", "b1")];
    await flush();
    let drained = false;
    const drain = queue.drain().then(() => (drained = true));
    for (const run of waiting) await expect(run).rejects.toMatchObject({ reason: "shutdown" });
    await flush();
    expect(drained).toBe(false);
    await finish("a1");
    await drain;
    expect(await running).toBe("a1");
    expect([queue.running, queue.waiting]).toEqual([0, 0]);
  });
});
