import { describe, expect, it } from "vitest";
import { headers } from "@nats-io/transport-node";
import {
  AGENT_HEADER,
  decodeReply,
  decodeRun,
  decodeStatus,
  encodeJson,
  encodeRun,
  runHeaders,
  UNNAMED_AGENT,
  WIRE_VERSION,
} from "./wire.js";

describe("run messages", () => {
  it("carry code, payload, dependency files and folder bytes across the bus unchanged", () => {
    const folder = [{ path: "scripts/run.py", content: Buffer.from([0, 1, 2, 255]) }];
    const request = {
      code: "print(1)",
      payload: '{"x": 1}',
      purpose: "invoke",
      skillName: "adder",
      agentId: "alice@example",
      files: [{ name: "helper.py", content: "X = 1" }],
      folder,
      idempotencyKey: "not sent: the control plane decides retries",
    } as const;
    const decoded = decodeRun(encodeRun("run-1", request), runHeaders(request));
    if ("problem" in decoded) throw new Error(decoded.problem);
    expect(decoded.run.id).toBe("run-1");
    expect(decoded.request).toEqual({
      code: "print(1)",
      payload: '{"x": 1}',
      purpose: "invoke",
      skillName: "adder",
      agentId: "alice@example",
      files: [{ name: "helper.py", content: "X = 1" }],
      folder,
    });
  });

  it("name their agent in a header, so the body stays what runners of an earlier release accept", () => {
    const request = { code: "", payload: "{}", purpose: "test", skillName: "s", agentId: "alice" } as const;
    const body = JSON.parse(Buffer.from(encodeRun("r", request)).toString()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["code", "files", "folder", "id", "payload", "purpose", "skillName", "v"]);
    expect(runHeaders(request).get(AGENT_HEADER)).toBe("alice");
    // A control plane of an earlier release names no agent; a malformed name is not taken as one.
    const agentOf = (sent?: string): unknown => {
      const sentHeaders = headers();
      if (sent !== undefined) sentHeaders.set(AGENT_HEADER, sent);
      const decoded = decodeRun(encodeRun("r", request), sent === undefined ? undefined : sentHeaders);
      return "problem" in decoded ? decoded.problem : decoded.request.agentId;
    };
    expect(agentOf()).toBe(UNNAMED_AGENT);
    expect(agentOf("-not an agent-")).toBe(UNNAMED_AGENT);
    expect(agentOf("bob")).toBe("bob");
  });

  it("are refused with a reason when malformed, of another version or not JSON", () => {
    const valid = JSON.parse(
      Buffer.from(encodeRun("r", { code: "", payload: "{}", purpose: "test", skillName: "s", agentId: "a" })).toString(),
    ) as Record<string, unknown>;
    expect(decodeRun(Buffer.from("{nope"))).toEqual({ problem: "not JSON" });
    expect(decodeRun(encodeJson({ ...valid, v: WIRE_VERSION + 1 }))).toHaveProperty("problem", expect.stringMatching(/\/v/));
    expect(decodeRun(encodeJson({ ...valid, purpose: "mine" }))).toHaveProperty("problem", expect.stringMatching(/\/purpose/));
    expect(decodeRun(encodeJson({ ...valid, extra: true }))).toHaveProperty("problem");
    expect(decodeRun(encodeJson({ ...valid, files: [{ name: "" }] }))).toHaveProperty("problem");
    for (const name of ["../x.py", "a/b.py", "x.sh"]) {
      expect(decodeRun(encodeJson({ ...valid, files: [{ name, content: "" }] }))).toHaveProperty(
        "problem",
        expect.stringMatching(/files\/0\/name/),
      );
    }
    for (const path of ["../etc/passwd", "/abs", "a/../../b", "a//b", "./a", "a/.", "a\u0000b"]) {
      expect(decodeRun(encodeJson({ ...valid, folder: [{ path, content: "" }] }))).toHaveProperty(
        "problem",
        expect.stringMatching(/folder\/0\/path/),
      );
    }
    for (const path of ["SKILL.md", "scripts/run.py", "a/.hidden", "a/..b"]) {
      expect(decodeRun(encodeJson({ ...valid, folder: [{ path, content: "" }] }))).not.toHaveProperty("problem");
    }
  });
});

describe("replies and statuses", () => {
  const result = {
    exitCode: 0,
    stdout: "1\n",
    stderr: "",
    durationMs: 5,
    timedOut: false,
    oomKilled: false,
    stdoutTruncated: false,
    stderrTruncated: false,
    errorSummary: "",
    success: true,
  };

  it("are understood when well formed and ignored otherwise", () => {
    expect(decodeReply(encodeJson({ type: "accepted", runner: "a", cancel: "p.runners.a.cancel", heartbeatMs: 1000 }))).toMatchObject({
      type: "accepted",
    });
    expect(decodeReply(encodeJson({ type: "accepted", runner: "a", cancel: "c" }))).toBeUndefined();
    expect(decodeReply(encodeJson({ type: "result", result }))).toEqual({ type: "result", result });
    expect(decodeReply(encodeJson({ type: "result", result: { ...result, success: "yes" } }))).toBeUndefined();
    expect(decodeReply(encodeJson({ type: "failed", kind: "unavailable", fault: "container-lost", message: "m" }))).toMatchObject({
      kind: "unavailable",
    });
    expect(decodeReply(encodeJson({ type: "failed", kind: "whatever", message: "m" }))).toBeUndefined();
    expect(decodeReply(Buffer.from(""))).toBeUndefined();
  });

  it("statuses need every count, the engine's state and the beat", () => {
    const status = {
      v: WIRE_VERSION,
      runner: "a",
      slots: 2,
      busy: 1,
      warmIdle: 1,
      awaitingRemoval: 0,
      engineReady: true,
      engineDetail: "ok",
      stopping: false,
      heartbeatMs: 500,
    };
    expect(decodeStatus(encodeJson(status))).toEqual(status);
    expect(decodeStatus(encodeJson({ ...status, busy: -1 }))).toBeUndefined();
    expect(decodeStatus(encodeJson({ ...status, heartbeatMs: 0 }))).toBeUndefined();
    expect(decodeStatus(encodeJson({ ...status, v: 99 }))).toBeUndefined();
  });
});
