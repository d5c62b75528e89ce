import { type ClientUnaryCall, Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { Visibility } from "../src/gen/skillengine/v1/skills.js";
import { eventually } from "./support/poll.js";
import { connect, queueDepth, runsInFlight, startTestEngine, type TestEngine, whileItsContainerRuns } from "./support/test-engine.js";

const TOKENS = {
  alice: "alice-0123456789abcdef",
  bob: "bob-0123456789abcdef01",
  carol: "carol-0123456789abcdef",
};
type Agent = keyof typeof TOKENS;

const SLEEPER = `import json, sys, time
args = json.loads(sys.argv[1])
time.sleep(args.get("sleep", 0))
print("slept", args.get("sleep", 0))
`;

/** An invocation the test can cancel, and what it has come to so far. */
interface Invocation {
  readonly call: ClientUnaryCall;
  readonly answer: Promise<InvokeSkillResponse>;
  /** The call's error once it failed; undefined while it waits, runs or when it succeeded. */
  error(): ServiceError | undefined;
  settled(): boolean;
}

describe("the run queue is shared fairly among agents (docs/security.md#fair-share-of-the-run-queue)", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},carol=${TOKENS.carol}`,
        // One slot and four waiting runs in all: a quarter of that, one run, is each agent's own limit,
        // except carol's, which is more than the whole queue holds.
        SKILL_ENGINE_MAX_CONCURRENT_RUNS: "1",
        SKILL_ENGINE_MAX_QUEUED_RUNS: "4",
        SKILL_ENGINE_MAX_QUEUED_RUNS_BY_AGENT: "carol=8",
        // The flooding runs never end by themselves: the test cancels them.
        SKILL_ENGINE_TIMEOUT_MS: "300000",
      },
    });
    const alice = connect(engine.app.port, TOKENS.alice);
    await alice.register({ name: "sleeper", code: SLEEPER, testPayload: '{"sleep": 0}', visibility: Visibility.VISIBILITY_PUBLIC });
    alice.close();
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  function invoke(agent: Agent, sleep: number): Invocation {
    const client = connect(engine.app.port, TOKENS[agent]);
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${TOKENS[agent]}`);
    let error: ServiceError | undefined;
    let settled = false;
    let call: ClientUnaryCall | undefined;
    const answer = new Promise<InvokeSkillResponse>((resolve, reject) => {
      call = client.raw.invokeSkill(
        { name: "sleeper", payload: JSON.stringify({ sleep }), payloadJson: undefined, routeId: "", files: [] },
        metadata,
        { deadline: Date.now() + 300_000 },
        (failure, response) => {
          settled = true;
          error = failure ?? undefined;
          client.close();
          if (failure) reject(failure);
          else resolve(response);
        },
      );
    });
    answer.catch(() => undefined); // observed through error() or awaited by the test
    return { call: call as ClientUnaryCall, answer, error: () => error, settled: () => settled };
  }

  /** Starts `agent`'s first run and waits until its container runs: it holds the only slot. */
  async function holdTheSlot(agent: Agent): Promise<Invocation> {
    let first: Invocation | undefined;
    await whileItsContainerRuns(engine.instanceTag, async () => {
      first = invoke(agent, 300);
      return first.answer;
    });
    return first as Invocation;
  }

  /** Waits until `count` of `calls` were refused, and returns their messages. */
  async function refusals(calls: readonly Invocation[], count: number): Promise<string[]> {
    return eventually(`${count} calls to be refused`, () => {
      const refused = calls.flatMap((call) => call.error() ?? []);
      return refused.length >= count ? refused : undefined;
    }).then((refused) => {
      expect(refused.map((error) => error.code)).toEqual(Array<number>(count).fill(status.RESOURCE_EXHAUSTED));
      return refused.map((error) => error.details);
    });
  }

  /** Waits until `depth` runs wait; fails as soon as `watched` is refused instead of waiting. */
  async function untilWaiting(depth: number, watched?: Invocation): Promise<void> {
    const refusedInstead = (): Error | undefined => {
      const error = watched?.error();
      return error ? new Error(`the call was refused instead of waiting: ${error.details}`) : undefined;
    };
    await eventually(`${depth} runs waiting`, async () => {
      if (refusedInstead()) return false;
      return (await queueDepth(engine)) === depth ? true : undefined;
    });
    const refused = refusedInstead();
    if (refused) throw refused;
  }

  /** Cancels what is left of `calls` and waits until nothing runs or waits. */
  async function cancelAll(calls: readonly Invocation[]): Promise<void> {
    for (const call of calls) if (!call.settled()) call.call.cancel();
    await eventually("the queue to empty", async () =>
      (await queueDepth(engine)) === 0 && (await runsInFlight(engine)) === 0 ? true : undefined,
    );
  }

  it("an agent past its share is refused alone; another agent's run waits and goes next", async () => {
    const first = await holdTheSlot("alice");
    const flood = Array.from({ length: 9 }, () => invoke("alice", 300));
    const refused = await refusals(flood, 8);
    for (const details of refused) expect(details).toMatch(/queue is full for agent alice: it has 1 run waiting, its limit/);
    await untilWaiting(1);

    const bob = invoke("bob", 0);
    await untilWaiting(2, bob);
    // The slot frees: bob's run goes before alice's waiting one, whose run would hold it for minutes.
    first.call.cancel();
    expect((await bob.answer).result?.stdout).toContain("slept 0");
    expect(flood.filter((call) => !call.settled())).toHaveLength(1);
    await cancelAll([first, ...flood]);
  });

  it("when one agent fills the whole queue, another's run takes the place of its newest", async () => {
    const first = await holdTheSlot("carol");
    const flood = Array.from({ length: 9 }, () => invoke("carol", 300));
    const full = await refusals(flood, 5);
    for (const details of full) expect(details).toMatch(/queue is full \(1 running, 4 waiting\)/);
    await untilWaiting(4);

    const bob = invoke("bob", 0);
    const displaced = await refusals(flood, 6);
    expect(displaced.filter((details) => /agent carol has the most runs waiting \(4\), so its newest gave way/.test(details))).toHaveLength(
      1,
    );
    await untilWaiting(4, bob);
    // bob's run goes before carol's three waiting ones.
    first.call.cancel();
    expect((await bob.answer).result?.stdout).toContain("slept 0");
    expect(flood.filter((call) => !call.settled())).toHaveLength(3);
    await cancelAll([first, ...flood]);
  });
});
