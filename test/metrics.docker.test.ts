import { Metadata } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { metricSamples, rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

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

  it("counts the files runs were handed and gave back, and their bytes, by direction and purpose", async () => {
    const counts = async (): Promise<Record<string, number>> => {
      const result: Record<string, number> = {};
      for (const metric of ["skill_engine_run_files_total", "skill_engine_run_file_bytes_total"]) {
        for (const { labels, value } of await metricSamples(engine, metric)) {
          result[`${metric.replace(/^skill_engine_run_|_total$/g, "")} ${labels.direction} ${labels.purpose}`] = value;
        }
      }
      return result;
    };
    // Present from the first scrape, at zero: nothing so far handed or returned a file.
    expect(Object.values(await counts())).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    const copies = `import os
name = sorted(os.listdir("/sandbox/in"))[0]
with open("/sandbox/in/" + name, "rb") as f:
    data = f.read()
with open("/sandbox/out/copy.txt", "wb") as f:
    f.write(data)
with open("/sandbox/out/extra.bin", "wb") as f:
    f.write(b"x" * 100)
print("copied", len(data))
`;
    const registered = await engine.client.register({
      name: "copies",
      code: copies,
      testFiles: [{ path: "in.txt", content: Buffer.from("hello") }],
    });
    expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    const invoked = await engine.client.call(engine.client.raw.invokeSkill, {
      name: "copies",
      payload: "{}",
      payloadJson: undefined,
      routeId: "",
      files: [{ path: "b.txt", content: Buffer.from("abc") }],
    });
    expect(invoked.result?.success, JSON.stringify(invoked.result)).toBe(true);
    expect(invoked.files.map((f) => f.path)).toEqual(["copy.txt", "extra.bin"]);
    expect(await counts()).toEqual({
      "files in test": 1,
      "files out test": 2,
      "files in invoke": 1,
      "files out invoke": 2,
      "file_bytes in test": 5,
      "file_bytes out test": 105,
      "file_bytes in invoke": 3,
      "file_bytes out invoke": 103,
    });
  });
});
