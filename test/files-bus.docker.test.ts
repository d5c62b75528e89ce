import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InputFile, InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { healthProbe, SKILL_ENGINE_SERVICE } from "./support/health-client.js";
import { type NatsServer, startNatsServer } from "./support/nats-server.js";
import { eventually } from "./support/poll.js";
import { type ServiceProcess, spawnRunner } from "./support/service-process.js";
import { rpcError, samples, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** nats-server's own default max_payload: what a bus with no configuration of its own allows. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** Draws the input CSV as an SVG and hands back the input blob reversed: text and binary, both ways. */
const CSV_AND_BLOB = `import csv, json, os, sys
args = json.loads(sys.argv[1])
with open("/sandbox/in/" + args["csv"]) as f:
    values = [float(r["value"]) for r in csv.DictReader(f)]
bars = "".join('<rect x="%d" y="%d" width="8" height="%d"/>' % (i * 10, 100 - v, v) for i, v in enumerate(values))
with open("/sandbox/out/chart.svg", "w") as f:
    f.write('<svg xmlns="http://www.w3.org/2000/svg">%s</svg>' % bars)
os.makedirs("/sandbox/out/bin")
with open("/sandbox/in/blob.bin", "rb") as f, open("/sandbox/out/bin/blob.rev", "wb") as g:
    g.write(f.read()[::-1])
print(json.dumps({"rows": len(values)}))
`;

/** Writes n files of `size` bytes each (a repeating pattern the test rebuilds). */
const BIG_OUTPUTS = `import json, sys
args = json.loads(sys.argv[1])
pattern = bytes(i % 251 for i in range(args["size"]))
for i in range(args["n"]):
    with open("/sandbox/out/part%d.bin" % i, "wb") as f:
        f.write(pattern)
print(json.dumps({"written": args["n"]}))
`;

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
const file = (filePath: string, content: string | Buffer): InputFile => ({ path: filePath, content: Buffer.from(content) });
const pattern = (size: number): Buffer => Buffer.from(Array.from({ length: size }, (_, i) => i % 251));

/**
 * Files in and out over the bus (docs/execution-hosts.md#files): a control plane with
 * SKILL_ENGINE_EXECUTION=nats, one runner process on the local engine, and a real nats-server with
 * its default max_payload of 1 MiB.
 */
describe("files in, files out through a runner on the bus", () => {
  let bus: NatsServer;
  let root: string;
  let runner: ServiceProcess;
  let plane: TestEngine;

  const invoke = (name: string, payload: object, files: InputFile[] = []): Promise<InvokeSkillResponse> =>
    plane.client.call(
      plane.client.raw.invokeSkill,
      { name, payload: JSON.stringify(payload), payloadJson: undefined, routeId: "", files },
      120_000,
    );
  const runnerRuns = async (): Promise<number> => {
    const text = await (await fetch(`http://127.0.0.1:${runner.port}/metrics`)).text();
    return samples(text, "skill_engine_sandbox_runs_total").reduce((sum, sample) => sum + sample.value, 0);
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "files-bus-"));
    // The helper's configuration allows 32 MiB; the later setting wins.
    bus = await startNatsServer({ extraConfig: `max_payload: ${DEFAULT_MAX_PAYLOAD}` });
    runner = await spawnRunner({
      SKILL_ENGINE_NATS_URL: bus.url,
      SKILL_ENGINE_RUNNER_ID: "files-runner",
      SKILL_ENGINE_SANDBOX_DIR: path.join(root, "runner-sandbox"),
      SKILL_ENGINE_MAX_CONCURRENT_RUNS: "2",
    });
    plane = await startTestEngine({
      env: {
        SKILL_ENGINE_EXECUTION: "nats",
        SKILL_ENGINE_NATS_URL: bus.url,
        SKILL_ENGINE_DISPATCH_WAIT_MS: "30000",
        // The control plane uses no engine of its own in this mode: a wrong address proves it.
        DOCKER_HOST: "unix:///nonexistent/docker.sock",
      },
    });
    const health = healthProbe(plane.app.port);
    try {
      await eventually(
        "the control plane to hear the runner",
        async () => ((await health.check(SKILL_ENGINE_SERVICE)) === "SERVING" ? true : undefined),
        { timeoutMs: 60_000 },
      );
    } finally {
      health.close();
    }
    // The registrations' test runs cross the bus with their test files too.
    for (const [name, code, testPayload, testFiles] of [
      ["csv_and_blob", CSV_AND_BLOB, '{"csv": "t.csv"}', [file("t.csv", "value\n1\n"), file("blob.bin", "ab")]],
      ["big_outputs", BIG_OUTPUTS, '{"n": 0, "size": 0}', []],
    ] as const) {
      const registered = await plane.client.register({ name, code, testPayload, testFiles: [...testFiles] }, 120_000);
      expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    }
  }, 180_000);

  afterAll(async () => {
    await plane?.dispose();
    await runner?.kill("SIGTERM");
    await bus?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  }, 120_000);

  it("hands the runner the input files and brings its output files back, byte for byte", async () => {
    const blob = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
    const response = await invoke("csv_and_blob", { csv: "data/values.csv" }, [
      file("data/values.csv", "label,value\na,10\nb,40\n"),
      file("blob.bin", blob),
    ]);
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({ rows: 2 });
    const byPath = new Map(response.files.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual(["bin/blob.rev", "chart.svg"]);
    expect(Buffer.from(byPath.get("chart.svg")?.content ?? []).toString()).toContain('<rect x="10" y="60" width="8" height="40"/>');
    expect(byPath.get("chart.svg")?.mediaType).toBe("image/svg+xml");
    const reversed = Buffer.from(blob).reverse();
    expect(Buffer.from(byPath.get("bin/blob.rev")?.content ?? []).equals(reversed)).toBe(true);
    for (const returned of response.files) {
      expect(returned.truncated).toBe(false);
      expect(returned.sizeBytes).toBe(returned.content.length);
      expect(returned.sha256).toBe(sha256(returned.content));
    }
    expect(response.warnings).toEqual([]);
  }, 180_000);

  it("a result whose files would not fit the bus comes back with them cut and a warning, and the run succeeds", async () => {
    const size = 600 * 1024;
    const response = await invoke("big_outputs", { n: 3, size });
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({ written: 3 });
    const whole = pattern(size);
    expect(response.files.map((f) => f.path)).toEqual(["part0.bin", "part1.bin", "part2.bin"]);
    // Every file keeps its whole size and digest; what content came back is its first bytes.
    for (const returned of response.files) {
      expect(returned.sizeBytes).toBe(size);
      expect(returned.sha256).toBe(sha256(whole));
      expect(Buffer.from(returned.content).equals(whole.subarray(0, returned.content.length))).toBe(true);
    }
    expect(response.files[0]?.truncated).toBe(false);
    expect(response.files.slice(1).every((f) => f.truncated)).toBe(true);
    expect(response.warnings).toContainEqual(
      expect.stringMatching(
        /^output files cut to fit the message bus \(2 truncated, 0 left out\): .*at most 1048576 bytes \(nats-server's max_payload\)/,
      ),
    );
  }, 180_000);

  it("a request whose input files do not fit the bus is refused before any runner sees it", async () => {
    const before = await runnerRuns();
    const error = await rpcError(
      invoke("csv_and_blob", { csv: "v.csv" }, [file("v.csv", "value\n1\n"), file("blob.bin", pattern(900 * 1024))]),
    );
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(
      /the run request is 1\.2 MiB \(its input files 0\.9 MiB of it, 1\.2 MiB in base64\), more than the bus's max_payload of 1\.0 MiB/,
    );
    expect(error.details).toMatch(/docs\/execution-hosts\.md#files/);
    expect(await runnerRuns()).toBe(before);
  }, 120_000);
});
