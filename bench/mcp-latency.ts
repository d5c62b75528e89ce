/**
 * npm run bench (MCP part; docs/performance.md#the-mcp-door), also `npm run bench:mcp`. Starts the real service as
 * its own process, with the warm pool and the MCP door on, and measures in one run the same warm run of a small
 * skill two ways, alternating, one call every BENCH_PACE_MS, BENCH_PACED times each:
 * - `run_skill` over Streamable HTTP with the SDK's own client, one session reused;
 * - `InvokeSkill` over gRPC with the generated client.
 * The ratio of their p50s is the last line (aim ≤ 1.3). BENCH_PROFILE=1 adds a few hundred cheap calls (`ping`,
 * `tools/list`, a `find_skills` against RouteSkills) that split the door's own cost from the run's.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { RouteSkillsRequest } from "../src/gen/skillengine/v1/routing.js";
import { spawnService } from "../test/support/service-process.js";
import { connect } from "../test/support/test-engine.js";

const PACED = Number(process.env.BENCH_PACED ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);
const PROFILE = process.env.BENCH_PROFILE === "1";

const SKILL = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"doubled": args["n"] * 2}))
`;

interface Stats {
  n: number;
  p50: number;
  p95: number;
}

function stats(samplesMs: number[]): Stats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(what: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await what();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-mcp-"));
  const service = await spawnService({
    SKILL_ENGINE_HOME: path.join(root, "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: "on",
    SKILL_ENGINE_MCP_PORT: "0",
  });
  const listening = service.logs.find((entry) => String(entry.msg).startsWith("skill engine listening"));
  const mcpPort = listening?.mcpPort;
  if (typeof mcpPort !== "number") throw new Error("the service did not say its MCP port");
  const grpc = connect(service.port);
  const mcp = new Client({ name: "skill-engine-bench", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${mcpPort}/mcp`));
  const figures: Record<string, unknown> = {
    date: new Date().toISOString(),
    paced: PACED,
    paceMs: PACE_MS,
    cpus: os.cpus().length,
    loadavg: os.loadavg().map((l) => Number(l.toFixed(2))),
  };
  try {
    await grpc.register({
      name: "mcp_bench",
      description: "Doubles n",
      parametersSchema: '{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}',
      code: SKILL,
      testPayload: '{"n": 1}',
    });
    await mcp.connect(transport);
    await sleep(3_000); // the pool fills

    const overMcp = () =>
      timed(async () => {
        const result = await mcp.callTool({ name: "run_skill", arguments: { name: "mcp_bench", arguments: { n: 21 } } }, undefined, {
          timeout: 120_000,
        });
        if (result.isError || (result.structuredContent as { doubled?: number } | undefined)?.doubled !== 42) {
          throw new Error(`run_skill failed: ${JSON.stringify(result)}`);
        }
      });
    const overGrpc = () =>
      timed(async () => {
        const response = await grpc.invoke("mcp_bench", '{"n": 21}', 120_000);
        if (!response.result?.success || response.result.stdout.trim() !== '{"doubled": 42}') {
          throw new Error(`InvokeSkill failed: ${JSON.stringify(response.result)}`);
        }
      });

    // One of each first, not counted: the first call of each path pays for connections and compiled schemas.
    await overMcp();
    await overGrpc();
    const samples: Record<"mcp" | "grpc", number[]> = { mcp: [], grpc: [] };
    for (let i = 0; i < PACED; i++) {
      // Which goes first alternates, so neither always follows the other's pool refill.
      const order = i % 2 === 0 ? (["mcp", "grpc"] as const) : (["grpc", "mcp"] as const);
      for (const path of order) {
        await sleep(PACE_MS);
        samples[path].push(await (path === "mcp" ? overMcp() : overGrpc()));
      }
    }
    figures.runSkillOverHttp = stats(samples.mcp);
    figures.invokeSkillOverGrpc = stats(samples.grpc);
    figures.samplesMs = { mcp: samples.mcp.map(Math.round), grpc: samples.grpc.map(Math.round) };

    if (PROFILE) {
      // The door alone: calls that start no container.
      const repeat = async (n: number, what: () => Promise<unknown>): Promise<Stats> => {
        const taken: number[] = [];
        for (let i = 0; i < n; i++) taken.push(await timed(async () => void (await what())));
        return stats(taken);
      };
      figures.pingOverHttp = await repeat(200, () => mcp.ping());
      figures.toolsListOverHttp = await repeat(200, () => mcp.listTools());
      figures.findSkillsOverHttp = await repeat(100, () => mcp.callTool({ name: "find_skills", arguments: { query: "double a number" } }));
      // The same over plain fetch, without the SDK client's work (its output-schema validators): the door's own cost.
      const url = `http://127.0.0.1:${mcpPort}/mcp`;
      const headers = {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId ?? "",
        "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
      };
      let id = 1_000;
      const raw = (method: string, params: Record<string, unknown>) => async () => {
        const response = await fetch(url, { method: "POST", headers, body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }) });
        const text = await response.text();
        if (!response.ok || !text.includes('"result"')) throw new Error(`${method}: ${response.status} ${text.slice(0, 200)}`);
      };
      figures.pingOverFetch = await repeat(200, raw("ping", {}));
      figures.toolsListOverFetch = await repeat(200, raw("tools/list", {}));
      figures.findSkillsOverFetch = await repeat(100, raw("tools/call", { name: "find_skills", arguments: { query: "double a number" } }));
      figures.routeSkillsOverGrpc = await repeat(100, () =>
        grpc.call(grpc.raw.routeSkills, RouteSkillsRequest.fromPartial({ query: "double a number" })),
      );
    }

    const ms = (value: number) => `${value.toFixed(1).padStart(8)} ms`;
    const row = (what: string, s: Stats) => console.log(`${what.padEnd(58)} ${String(s.n).padStart(3)} ${ms(s.p50)} ${ms(s.p95)}`);
    console.log(`\n${"what".padEnd(58)} ${"n".padStart(3)} ${"p50".padStart(11)} ${"p95".padStart(11)}`);
    row(`run_skill over Streamable HTTP, warm, paced ${PACE_MS} ms`, figures.runSkillOverHttp as Stats);
    row(`InvokeSkill over gRPC, warm, paced ${PACE_MS} ms`, figures.invokeSkillOverGrpc as Stats);
    if (PROFILE) {
      row("ping over Streamable HTTP", figures.pingOverHttp as Stats);
      row("tools/list over Streamable HTTP", figures.toolsListOverHttp as Stats);
      row("find_skills over Streamable HTTP", figures.findSkillsOverHttp as Stats);
      row("ping over plain fetch (no SDK client)", figures.pingOverFetch as Stats);
      row("tools/list over plain fetch (no SDK client)", figures.toolsListOverFetch as Stats);
      row("find_skills over plain fetch (no SDK client)", figures.findSkillsOverFetch as Stats);
      row("RouteSkills over gRPC", figures.routeSkillsOverGrpc as Stats);
    }

    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `mcp-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(out, "mcp-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), file)}`);
    const http = (figures.runSkillOverHttp as Stats).p50;
    const direct = (figures.invokeSkillOverGrpc as Stats).p50;
    console.log(
      `warm p50, run_skill over Streamable HTTP / InvokeSkill over gRPC = ${direct > 0 ? (http / direct).toFixed(2) : "n/a"} (aim ≤ 1.3)`,
    );
  } finally {
    await mcp.close().catch(() => undefined);
    grpc.close();
    await service.kill("SIGTERM");
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
