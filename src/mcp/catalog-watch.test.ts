import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { type CatalogFingerprints, type CatalogReader, CatalogWatch } from "./catalog-watch.js";
import type { CallScope } from "./engine-client.js";

const POLL_MS = 1_000;

/** A service as the watch sees it: one etag, the skills of each caller, and every call counted. */
class FakeService implements CatalogReader {
  readonly etagCalls: Array<string | undefined> = [];
  readonly catalogCalls: Array<string | undefined> = [];
  /** Skill names per caller (key: authorization). */
  readonly skills = new Map<string | undefined, string[]>();
  etagValue = "a.1";

  async etag(scope: CallScope): Promise<string> {
    this.etagCalls.push(scope.authorization);
    return this.etagValue;
  }

  async fingerprints(scope: CallScope): Promise<CatalogFingerprints> {
    this.catalogCalls.push(scope.authorization);
    const names = this.skills.get(scope.authorization) ?? [];
    return { tools: names.map((name) => `${name}@1`).join("\n"), resources: "" };
  }
}

describe("CatalogWatch: one change poll per caller, reading the catalog only when its etag moved", () => {
  let service: FakeService;
  let watch: CatalogWatch;
  beforeEach(() => {
    vi.useFakeTimers();
    service = new FakeService();
    service.skills.set("Bearer alice", ["add"]);
    service.skills.set("Bearer bob", ["mul"]);
    watch = new CatalogWatch(service, { pollMs: POLL_MS });
  });
  afterEach(() => {
    watch.close();
    vi.useRealTimers();
  });

  /** The fingerprints a listener has been told, in order. */
  function listen(authorization: string | undefined): { reads: CatalogFingerprints[]; stop: () => void } {
    const reads: CatalogFingerprints[] = [];
    const stop = watch.subscribe(authorization, (read) => reads.push(read));
    return { reads, stop };
  }

  it("shares one poll among the sessions of a caller: one etag a interval, one catalog read while nothing changes", async () => {
    const sessions = [listen("Bearer alice"), listen("Bearer alice"), listen("Bearer alice")];
    await vi.advanceTimersByTimeAsync(5 * POLL_MS);
    expect(watch.size).toBe(1);
    // The first look, then one each interval, whatever the number of sessions.
    expect(service.etagCalls).toHaveLength(6);
    expect(service.catalogCalls).toEqual(["Bearer alice"]);
    for (const session of sessions) expect(session.reads).toEqual([{ tools: "add@1", resources: "" }]);
  });

  it("reads the catalog again when the etag moves, and tells every session of the caller what it found", async () => {
    const [one, two] = [listen("Bearer alice"), listen("Bearer alice")];
    await vi.advanceTimersByTimeAsync(POLL_MS);
    service.skills.set("Bearer alice", ["add", "sub"]);
    service.etagValue = "a.2";
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(service.catalogCalls).toHaveLength(2);
    for (const session of [one, two]) expect(session.reads.at(-1)).toEqual({ tools: "add@1\nsub@1", resources: "" });
  });

  it("a service that keeps no etag (an empty one) has its catalog read at every poll", async () => {
    service.etagValue = "";
    listen("Bearer alice");
    await vi.advanceTimersByTimeAsync(3 * POLL_MS);
    expect(service.catalogCalls).toHaveLength(4);
  });

  it("polls each caller with its own credentials; a session that joins a watched caller hears the last read at once", async () => {
    const alice = listen("Bearer alice");
    const bob = listen("Bearer bob");
    await vi.advanceTimersByTimeAsync(0);
    expect(watch.size).toBe(2);
    expect(alice.reads).toEqual([{ tools: "add@1", resources: "" }]);
    expect(bob.reads).toEqual([{ tools: "mul@1", resources: "" }]);
    const reads = service.catalogCalls.length;
    const late = listen("Bearer bob");
    expect(late.reads).toEqual([{ tools: "mul@1", resources: "" }]);
    expect(service.catalogCalls).toHaveLength(reads);
  });

  it("stops a caller's poll when its last session leaves", async () => {
    const one = listen("Bearer alice");
    const two = listen("Bearer alice");
    await vi.advanceTimersByTimeAsync(POLL_MS);
    one.stop();
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(watch.size).toBe(1);
    two.stop();
    expect(watch.size).toBe(0);
    const calls = service.etagCalls.length;
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(service.etagCalls).toHaveLength(calls);
  });

  it("a failed poll is told and tried again at the next interval", async () => {
    const errors: unknown[] = [];
    watch.close();
    let fail = true;
    const flaky: CatalogReader = {
      etag: (scope) => (fail ? Promise.reject(new Error("UNAVAILABLE")) : service.etag(scope)),
      fingerprints: (scope) => service.fingerprints(scope),
    };
    watch = new CatalogWatch(flaky, { pollMs: POLL_MS, onError: (error) => errors.push(error) });
    const session = listen("Bearer alice");
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    expect(session.reads).toEqual([]);
    fail = false;
    await vi.advanceTimersByTimeAsync(POLL_MS);
    expect(session.reads).toEqual([{ tools: "add@1", resources: "" }]);
  });

  it("never polls with an interval of 0", async () => {
    watch.close();
    watch = new CatalogWatch(service, { pollMs: 0 });
    listen("Bearer alice");
    await vi.advanceTimersByTimeAsync(10 * POLL_MS);
    expect(service.etagCalls).toEqual([]);
  });
});
