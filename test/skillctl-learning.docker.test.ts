import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctl } from "./support/skillctl.js";

const ECHO = `import json, sys\nprint(json.dumps({"echo": json.loads(sys.argv[1])}))\n`;

describe("skillctl's learning commands and metrics against a real server and engine", () => {
  let engine: TestEngine;
  let dir: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-learning-"));
  }, 120_000);

  afterAll(async () => {
    await engine?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("records sessions, lists, promotes and dismisses candidates, records an outcome; /metrics counts them", async () => {
    const port = engine.app.port;
    for (const tool of ["fetch_page", "parse_page", "store_page"]) {
      await engine.client.register({ name: tool, description: `step ${tool} of a page pipeline`, code: ECHO, testPayload: '{"url": "u"}' });
    }
    for (const day of ["mon", "tue", "wed"]) {
      const file = path.join(dir, `${day}.json`);
      const calls = ["fetch_page", "parse_page", "store_page"].map((tool) => ({ tool, arguments: { url: `https://example.test/${day}` } }));
      await writeFile(file, JSON.stringify({ session_key: day, tool_calls: calls }));
      const run = await skillctl(port, "sessions", "record", file);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain("recorded 3 tool call(s)");
      if (day === "wed") expect(run.stdout).toMatch(/1\s+candidate\s+3\s+-\s+fetch_page → parse_page → store_page/);
    }
    const listed = await skillctl(port, "candidates", "--status", "candidate", "--json");
    expect(listed.code).toBe(0);
    const [candidate] = JSON.parse(listed.stdout) as { id: number; status: string; occurrences: number }[];
    expect(candidate).toMatchObject({ status: "candidate", occurrences: 3 });

    const promoted = await skillctl(port, "promote", String(candidate?.id), "--name", "page_pipeline");
    expect(promoted.stdout).toContain("promoted candidate 1 to page_pipeline v1");
    const again = await skillctl(port, "dismiss", String(candidate?.id));
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("FAILED_PRECONDITION");

    // The key "url" is in every step: one parameter per step (docs/learning.md#promotion).
    const payload = JSON.stringify({ url_1: "https://example.test/x", url_2: "https://example.test/x", url_3: "https://example.test/x" });
    const invoked = await skillctl(port, "invoke", "page_pipeline", payload, "--json");
    expect(invoked.stderr).toBe("");
    const invocationId = (JSON.parse(invoked.stdout) as { invocationId: string }).invocationId;
    const outcome = await skillctl(port, "outcome", "page_pipeline", invocationId, "fail");
    expect(outcome.stdout).toContain("overrides the exit code's success");
    const stats = await skillctl(port, "stats", "page_pipeline", "--json");
    expect(stats.stdout).toContain('"source": "explicit"');

    const metrics = await (await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`)).text();
    expect(metrics).toMatch(/skill_engine_skill_candidates\{status="promoted"\} 1/);
    expect(metrics).toMatch(/skill_engine_candidate_promotions_total 1/);
    // The three pipeline steps share most of their description: the screen warned at least once.
    expect(metrics).toMatch(/skill_engine_near_duplicates_total\{verdict="warned"\} [1-9]/);
  }, 240_000);
});
