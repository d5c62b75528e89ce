import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DOUBLER_CODE, DOUBLER_SCHEMA, MCP_BIN } from "./support/mcp-clients.js";
import { connect, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * The protocol's inspector CLI (`@modelcontextprotocol/inspector-cli`, `--cli` mode) against the stdio bin, as a user
 * would run it from a terminal: a client configuration of the shape MCP clients read (docs/mcp.md#stdio) names the bin
 * and its environment; the inspector launches it, lists the tools and calls find_skills, and prints JSON.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const INSPECTOR = path.join(ROOT, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js");
/** The bin from source, through tsx's own launcher: the inspector runs a command and its arguments, no node flags. */
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const TOKEN = "alice-token-0123456789abcdef";
const run = promisify(execFile);

describe("the MCP inspector CLI against the stdio bin", () => {
  let engine: TestEngine;
  let root: string;
  let config: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "mcp-inspector-"));
    engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: `alice=${TOKEN}` } });
    const alice = connect(engine.app.port, TOKEN);
    try {
      await alice.register({
        name: "doubler",
        description: "Doubles an integer n and returns the doubled value.",
        parametersSchema: JSON.stringify(DOUBLER_SCHEMA),
        code: DOUBLER_CODE,
        testPayload: '{"n": 2}',
        exampleQueries: ["double the number 21"],
      });
    } finally {
      alice.close();
    }
    config = path.join(root, "mcp.json");
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          "skill-engine": {
            command: TSX,
            args: [MCP_BIN],
            env: { SKILL_ENGINE_ADDRESS: `127.0.0.1:${engine.app.port}`, SKILL_ENGINE_TOKEN: TOKEN },
          },
        },
      }),
    );
  });
  afterAll(async () => {
    await engine?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  });

  /** Runs the inspector in CLI mode and parses the JSON it prints; stderr has its banner and the bin's logs. */
  async function inspector(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await run(process.execPath, [INSPECTOR, "--cli", "--config", config, "--server", "skill-engine", ...args], {
      // v1 looks for its own package.json at "../package.json" from the working directory, yet imports it from its
      // module's: only a directory whose parent holds a package.json satisfies both (this one).
      cwd: path.join(ROOT, "test"),
      timeout: 180_000,
      // Nothing of ours but what the configuration gives the bin; no browser either way in --cli mode.
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/root" },
    });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  it("lists the tools with their schemas", async () => {
    const listed = (await inspector("--method", "tools/list")) as { tools: Array<{ name: string; inputSchema: { required?: string[] } }> };
    const names = listed.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["find_skills", "run_skill", "register_skill", "record_outcome", "get_lessons"]));
    expect(listed.tools.find((t) => t.name === "find_skills")?.inputSchema.required).toEqual(["query"]);
  });

  it("calls find_skills and gets the caller's routed skill with its route id", async () => {
    const result = await inspector(
      "--method",
      "tools/call",
      "--tool-name",
      "find_skills",
      "--tool-arg",
      "query=double the number 21",
      "min_relevance=0",
    );
    expect(result.isError).toBeFalsy();
    const found = result.structuredContent as { route_id: string; skills: Array<{ name: string; input_schema: unknown }> };
    expect(found.route_id).not.toBe("");
    expect(found.skills[0]).toMatchObject({ name: "doubler", input_schema: DOUBLER_SCHEMA });
  });
});
