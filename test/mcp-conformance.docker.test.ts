import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * The protocol's own conformance suite (`@modelcontextprotocol/conformance`, server mode) against the HTTP door
 * of a real service: every scenario that applies to a server with our tools, resources and prompts, run through
 * the suite's CLI as a user would, each check read from the results the CLI writes (docs/mcp.md#conformance).
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const CONFORMANCE = path.join(ROOT, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
const run = promisify(execFile);

/**
 * The scenarios that apply (docs/mcp.md#conformance lists the others and why not). The `tools-call-*` and
 * `json-schema-2020-12` ones call tools by fixed names: here those are skills, listed as tools of their own
 * (`SKILL_ENGINE_MCP_TOOLS=both`), so they check what a skill's tool answers and lists.
 */
const SCENARIOS = [
  "server-initialize",
  "ping",
  "tools-list",
  "tools-call-simple-text",
  "tools-call-error",
  "json-schema-2020-12",
  "resources-list",
  "prompts-list",
  "server-sse-multiple-streams",
  "dns-rebinding-protection",
] as const;

/** Prints the text the scenario asks for. */
const SIMPLE_TEXT_CODE = `print("This is a simple text response for testing.")
`;

/** Fails unless asked not to: its registration's test passes, the suite's call (no arguments) fails. */
const ERROR_CODE = `import json
import sys

if not json.loads(sys.argv[1]).get("succeed"):
    raise RuntimeError("This tool intentionally returns an error for testing")
print("ok")
`;

/** The scenario's JSON Schema 2020-12 input schema, as a skill's parameters schema. */
const SCHEMA_2020_12 = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
  properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
  additionalProperties: false,
};

const ECHO_CODE = `import json
import sys

print(json.dumps(json.loads(sys.argv[1])))
`;

interface Check {
  readonly id: string;
  readonly status: "SUCCESS" | "FAILURE" | "WARNING" | "INFO" | "SKIPPED";
  readonly errorMessage?: string;
}

describe("MCP conformance suite (server mode) against the Streamable HTTP door", () => {
  let engine: TestEngine;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "mcp-conformance-"));
    const skills = path.join(root, "skills");
    await mkdir(path.join(skills, "notes"), { recursive: true });
    await writeFile(
      path.join(skills, "notes", "SKILL.md"),
      "---\nname: release_notes\ndescription: How to write release notes for a version.\n---\nList the changes, newest first.\n",
    );
    // No tokens: the suite's DNS-rebinding scenario is about a local server without authentication.
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_MCP_PORT: "0",
        SKILL_ENGINE_MCP_TOOLS: "both",
        SKILL_ENGINE_SKILL_DIRS: skills,
        SKILL_ENGINE_SKILL_WATCH: "off",
      },
    });
    await engine.client.register({
      name: "test_simple_text",
      description: "Prints a line of text.",
      code: SIMPLE_TEXT_CODE,
      testPayload: "{}",
    });
    await engine.client.register({
      name: "test_error_handling",
      description: "Fails unless told to succeed.",
      code: ERROR_CODE,
      testPayload: '{"succeed": true}',
    });
    await engine.client.register({
      name: "json_schema_2020_12_tool",
      description: "Echoes a name and an address.",
      parametersSchema: JSON.stringify(SCHEMA_2020_12),
      code: ECHO_CODE,
      testPayload: '{"name": "Ada", "address": {"city": "London"}}',
    });
  });
  afterAll(async () => {
    await engine?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it.each(SCENARIOS)("%s: every check passes", async (scenario) => {
    const out = path.join(root, "results", scenario);
    const url = `http://127.0.0.1:${engine.app.mcpPort}/mcp`;
    // The CLI's exit code says whether a check failed; its results file says which, and holds the warnings too.
    const cli = await run(process.execPath, [CONFORMANCE, "server", "--url", url, "--scenario", scenario, "-o", out], {
      cwd: ROOT,
      timeout: 180_000,
    }).catch((error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? "" }));
    const [dir] = await readdir(out);
    if (dir === undefined) throw new Error(`the CLI wrote no results:\n${cli.stdout}\n${cli.stderr}`);
    const checks = JSON.parse(await readFile(path.join(out, dir, "checks.json"), "utf8")) as Check[];
    const judged = checks.filter((c) => c.status !== "INFO");
    expect(judged.length, `no checks ran:\n${cli.stdout}`).toBeGreaterThan(0);
    expect(
      judged.filter((c) => c.status !== "SUCCESS").map((c) => `${c.id}: ${c.status} ${c.errorMessage ?? ""}`),
      cli.stdout,
    ).toEqual([]);
  });
});
