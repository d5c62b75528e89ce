import { describe, expect, it } from "vitest";
import { decodeRun, encodeRun, runHeaders } from "./wire.js";

/** Secrets over the bus (docs/execution-hosts.md#messages): in the run request, never in a header. */
describe("a run's secrets on the wire", () => {
  const request = {
    code: "print(1)",
    payload: "{}",
    purpose: "invoke",
    skillName: "calls_api",
    agentId: "alice",
    secrets: { WEATHER_API_KEY: "sk-live-0123456789" },
  } as const;

  it("travel in the request and come out as they went in; a run without any sends no field", () => {
    const decoded = decodeRun(encodeRun("run-1", request), runHeaders(request));
    if ("problem" in decoded) throw new Error(decoded.problem);
    expect(decoded.request.secrets).toEqual({ WEATHER_API_KEY: "sk-live-0123456789" });
    expect(JSON.stringify([...runHeaders(request)])).not.toContain("sk-live");
    const { secrets: _none, ...plain } = request;
    expect(JSON.parse(Buffer.from(encodeRun("run-2", plain)).toString())).not.toHaveProperty("secrets");
  });

  it("are refused when a name breaks the rules, and the refusal never quotes a value", () => {
    const bad = JSON.parse(Buffer.from(encodeRun("run-3", request)).toString()) as Record<string, unknown>;
    bad.secrets = { "lower case": "sk-live-0123456789" };
    const decoded = decodeRun(Buffer.from(JSON.stringify(bad)));
    expect(decoded).toHaveProperty("problem");
    expect(JSON.stringify(decoded)).not.toContain("sk-live");
  });
});
