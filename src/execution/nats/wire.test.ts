import { describe, expect, it } from "vitest";
import { headers } from "@nats-io/transport-node";
import { encodeResultReply } from "./reply-fit.js";
import {
  AGENT_HEADER,
  decodeReply,
  decodeRun,
  decodeStatus,
  encodeJson,
  encodeReply,
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

  it("carry input files byte for byte, and only when there are some (runners of an earlier release take the rest)", () => {
    const inputFiles = [
      { path: "data/values.csv", content: Buffer.from("a,b\n1,2\n") },
      { path: "blob.bin", content: Buffer.from([0, 255, 10, 13, 0x80]) },
      { path: "empty", content: Buffer.alloc(0) },
    ];
    const request = { code: "", payload: "{}", purpose: "invoke", skillName: "s", agentId: "a", inputFiles } as const;
    const decoded = decodeRun(encodeRun("r", request));
    if ("problem" in decoded) throw new Error(decoded.problem);
    expect(decoded.request.inputFiles).toEqual(inputFiles);
    const withNone = JSON.parse(Buffer.from(encodeRun("r", { ...request, inputFiles: [] })).toString()) as Record<string, unknown>;
    expect(withNone).not.toHaveProperty("inputFiles");
    const valid = JSON.parse(Buffer.from(encodeRun("r", request)).toString()) as Record<string, unknown>;
    for (const path of ["../etc/passwd", "/abs", "a//b", "a/..", ""]) {
      expect(decodeRun(encodeJson({ ...valid, inputFiles: [{ path, content: "" }] }))).toHaveProperty(
        "problem",
        expect.stringMatching(/inputFiles\/0\/path/),
      );
    }
    expect(decodeRun(encodeJson({ ...valid, inputFiles: [{ path: "x", content: 1 }] }))).toHaveProperty("problem");
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

  const outputFile = (path: string, content: Buffer) => ({
    path,
    sizeBytes: content.byteLength,
    sha256: "0".repeat(64),
    content,
    truncated: false,
    mediaType: "application/octet-stream",
  });

  it("carry a result's output files byte for byte, and its file warnings", () => {
    const withFiles = {
      ...result,
      outputFiles: [outputFile("chart.svg", Buffer.from("<svg/>")), outputFile("raw.bin", Buffer.from([0, 255, 0x80, 10]))],
      fileWarnings: ["skipped fifo under /sandbox/out: a fifo, not a regular file"],
    };
    const wire = JSON.parse(Buffer.from(encodeReply({ type: "result", result: withFiles })).toString()) as {
      result: { outputFiles: Array<{ content: unknown }> };
    };
    expect(wire.result.outputFiles[1]?.content).toBe(Buffer.from([0, 255, 0x80, 10]).toString("base64"));
    expect(decodeReply(encodeReply({ type: "result", result: withFiles }))).toEqual({ type: "result", result: withFiles });
    const malformed = { ...wire.result, outputFiles: [{ path: "x", content: "" }] };
    expect(decodeReply(encodeJson({ type: "result", result: malformed }))).toBeUndefined();
    expect(decodeReply(encodeJson({ type: "result", result: { ...result, fileWarnings: [1] } }))).toBeUndefined();
  });

  it("a result whose files would not fit the bus comes back with its files cut and a warning, never as a failure", () => {
    const big = Buffer.alloc(300_000, 7);
    const full = {
      ...result,
      outputFiles: [outputFile("a.bin", Buffer.from("first")), outputFile("b.bin", big), outputFile("c.bin", big)],
      fileWarnings: ["an earlier warning"],
    };
    // Fits: sent whole, nothing said.
    const whole = encodeResultReply(full, 1024 * 1024);
    expect(whole.cut).toBeUndefined();
    const sent = decodeReply(whole.bytes);
    if (sent?.type !== "result") throw new Error("not a result");
    // Buffers compared with equals: a deep comparison of 300 kB goes byte by byte.
    expect(sent.result.outputFiles?.every((file, i) => file.content.equals(full.outputFiles[i]?.content ?? Buffer.alloc(0)))).toBe(true);

    const maxPayload = 256 * 1024;
    const fitted = encodeResultReply(full, maxPayload);
    expect(fitted.bytes.byteLength).toBeLessThanOrEqual(maxPayload);
    const reply = decodeReply(fitted.bytes);
    if (reply?.type !== "result") throw new Error("not a result");
    const [a, b, c] = reply.result.outputFiles ?? [];
    expect(a).toEqual(full.outputFiles[0]);
    // The file where room ran out keeps its first bytes; the next keeps its entry without content.
    expect(b).toMatchObject({ path: "b.bin", sizeBytes: big.byteLength, truncated: true });
    expect(b?.content.byteLength).toBeGreaterThan(100_000);
    expect(b?.content.equals(big.subarray(0, b.content.byteLength))).toBe(true);
    expect(c).toMatchObject({ path: "c.bin", sizeBytes: big.byteLength, truncated: true });
    expect(c?.content.byteLength).toBe(0);
    expect(reply.result.stdout).toBe(full.stdout);
    expect(reply.result.fileWarnings).toEqual(["an earlier warning", fitted.cut]);
    expect(fitted.cut).toMatch(
      /^output files cut to fit the message bus \(2 truncated, 0 left out\): .*at most 262144 bytes \(nats-server's max_payload\)/,
    );

    // Too many entries for the room: the ones that do not fit are left out.
    const many = { ...result, outputFiles: Array.from({ length: 300 }, (_, i) => outputFile(`f${i}.txt`, Buffer.from("x"))) };
    const small = encodeResultReply(many, 8 * 1024);
    expect(small.bytes.byteLength).toBeLessThanOrEqual(8 * 1024);
    const cut = decodeReply(small.bytes);
    if (cut?.type !== "result") throw new Error("not a result");
    const kept = cut.result.outputFiles?.length ?? 0;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(300);
    // The last entries kept may have had no room left for their one byte.
    const truncated = cut.result.outputFiles?.filter((file) => file.truncated).length ?? 0;
    expect(cut.result.outputFiles?.filter((file) => !file.truncated).every((file) => file.content.toString() === "x")).toBe(true);
    expect(small.cut).toContain(`(${truncated} truncated, ${300 - kept} left out)`);
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
