import { describe, expect, it } from "vitest";
import { decodeReply, decodeRun, encodeReply, encodeRun, runHeaders } from "./wire.js";

/** Egress over the bus (docs/security.md#egress): the declarations in the request, the refusals in the result. */
describe("a run's network_allow on the wire", () => {
  const request = {
    code: "print(1)",
    payload: "{}",
    purpose: "invoke",
    skillName: "calls_api",
    agentId: "alice",
    networkAllow: ["api.example.com", "*.example.org:8443"],
  } as const;

  it("travels in the request and comes out as it went in; a run without any sends no field", () => {
    const decoded = decodeRun(encodeRun("run-1", request), runHeaders(request));
    if ("problem" in decoded) throw new Error(decoded.problem);
    expect(decoded.request.networkAllow).toEqual(["api.example.com", "*.example.org:8443"]);
    const { networkAllow: _none, ...plain } = request;
    expect(JSON.parse(Buffer.from(encodeRun("run-2", plain)).toString())).not.toHaveProperty("networkAllow");
  });

  it("is refused when it is not a list of short strings", () => {
    const bad = JSON.parse(Buffer.from(encodeRun("run-3", request)).toString()) as Record<string, unknown>;
    bad.networkAllow = [{ host: "x" }];
    expect(decodeRun(Buffer.from(JSON.stringify(bad)))).toHaveProperty("problem");
  });

  it("brings the gateway's refusals back with the result", () => {
    const result = {
      exitCode: 0,
      stdout: "ok\n",
      stderr: "",
      durationMs: 12,
      timedOut: false,
      oomKilled: false,
      stdoutTruncated: false,
      stderrTruncated: false,
      errorSummary: "",
      success: true,
      networkWarnings: ["network: evil.example:80 refused: not in the skill's network_allow"],
    };
    expect(decodeReply(encodeReply({ type: "result", result }))).toEqual({ type: "result", result });
  });
});
