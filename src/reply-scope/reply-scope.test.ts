import { describe, expect, it } from "vitest";
import { AFTER_REPLY_MAX_WAIT_MS, afterReply, ReplyScope, untilReplied } from "./reply-scope.js";

/** One turn of the event loop: past the immediates and 0 ms timers queued before it. */
const turn = () => new Promise((resolve) => setTimeout(resolve, 1));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("afterReply", () => {
  it("outside a call runs the work on the next turn of the event loop", async () => {
    let ran = false;
    afterReply(() => (ran = true));
    expect(ran).toBe(false);
    await turn();
    expect(ran).toBe(true);
  });

  it("inside a call waits for the call's reply, across the handler's awaits", async () => {
    const scope = new ReplyScope();
    const order: string[] = [];
    await scope.run(async () => {
      await turn();
      afterReply(() => order.push("mirror"));
      void untilReplied().then(() => order.push("index"));
      order.push("handler done");
    });
    await sleep(10);
    expect(order).toEqual(["handler done"]);
    scope.settle();
    expect(order).toEqual(["handler done"]);
    await turn();
    await turn();
    expect(order).toEqual(["handler done", "mirror", "index"]);
  });

  it("runs deferred work after AFTER_REPLY_MAX_WAIT_MS when the call never replies, and at once after it has", async () => {
    const scope = new ReplyScope();
    let late = 0;
    scope.run(() => afterReply(() => late++));
    await sleep(AFTER_REPLY_MAX_WAIT_MS + 20);
    expect(late).toBe(1);
    scope.settle();
    await turn();
    expect(late).toBe(1);
    scope.run(() => afterReply(() => late++));
    await turn();
    expect(late).toBe(2);
  });
});
