import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

describe("observability: Prometheus metrics on their own HTTP port, request ids", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine();
    await engine.client.register({
      name: "maybe",
      code: 'import json, sys\nif json.loads(sys.argv[1]).get("fail"):\n    raise SystemExit(2)\nprint("ok")\n',
    });
    await engine.client.invoke("maybe", "{}");
    await engine.client.invoke("maybe", '{"fail": true}');
    await rpcError(engine.client.invoke("no_such_skill"));
  });
  afterAll(async () => {
    await engine.dispose();
  });

  it("counts RPCs by method and code, runs by outcome and path, and reports queue, pool and skills by status", async () => {
    expect(engine.app.metricsPort).toBeGreaterThan(0);
    const response = await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('skill_engine_rpc_requests_total{method="RegisterSkill",code="OK"} 1');
    expect(text).toContain('skill_engine_rpc_requests_total{method="InvokeSkill",code="OK"} 2');
    expect(text).toContain('skill_engine_rpc_requests_total{method="InvokeSkill",code="NOT_FOUND"} 1');
    expect(text).toMatch(/skill_engine_rpc_duration_seconds_bucket\{le="[^"]+",method="InvokeSkill"\} \d+/);
    expect(text).toContain('skill_engine_sandbox_runs_total{outcome="success",path="cold",purpose="test"} 1');
    expect(text).toContain('skill_engine_sandbox_runs_total{outcome="success",path="cold",purpose="invoke"} 1');
    expect(text).toContain('skill_engine_sandbox_runs_total{outcome="failure",path="cold",purpose="invoke"} 1');
    expect(text).toMatch(/skill_engine_sandbox_run_duration_seconds_count\{path="cold"\} 3/);
    expect(text).toContain("skill_engine_run_queue_depth 0");
    expect(text).toContain("skill_engine_warm_pool_idle 0");
    expect(text).toContain('skill_engine_skills{status="active"} 1');
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it("serves liveness and readiness probes beside the metrics, and a 404 naming the paths", async () => {
    const base = `http://127.0.0.1:${engine.app.metricsPort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect([ready.status, await ready.text()]).toEqual([200, "ready\n"]);
    const other = await fetch(`${base}/admin`);
    expect([other.status, await other.text()]).toEqual([404, "not found: GET /metrics, /healthz or /readyz\n"]);
  });

  it("answers every call with an x-request-id: the caller's own when it sent one, else a new one", async () => {
    const idOf = (metadata: Metadata) =>
      new Promise<string>((resolve, reject) => {
        const call = engine.client.raw.listSkills({ includeInactive: false, owner: "" }, metadata, (error) => error && reject(error));
        call.on("metadata", (reply: Metadata) => resolve(String(reply.get("x-request-id")[0])));
      });
    const mine = new Metadata();
    mine.set("x-request-id", "req-123");
    expect(await idOf(mine)).toBe("req-123");
    expect(await idOf(new Metadata())).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers 404 elsewhere", async () => {
    expect((await fetch(`http://127.0.0.1:${engine.app.metricsPort}/`)).status).toBe(404);
  });
});
