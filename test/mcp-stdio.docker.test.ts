import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "./support/poll.js";
import {
  CALL_OPTIONS,
  DOUBLER_CODE,
  DOUBLER_SCHEMA,
  invocationIdOf,
  PICKY_CODE,
  SLEEPER_CODE,
  stdioClient,
  textOf,
} from "./support/mcp-clients.js";
import { containersOf, startTestEngine, type TestEngine, whileItsContainerRuns } from "./support/test-engine.js";

/**
 * The stdio bin (docs/mcp.md#stdio) as an MCP client launches it: its own process, from source through tsx,
 * forwarding to a real service over gRPC with the token from its environment.
 */

const TOKENS = { alice: "alice-token-0123456789abcdef", bob: "bob-token-0123456789abcdef" } as const;

describe("skill-engine-mcp over stdio", () => {
  let engine: TestEngine;
  let alice: { client: Client; transport: StdioClientTransport };
  const stderr: string[] = [];

  beforeAll(async () => {
    // Runs sleep 600 s within this limit: only the cancellation under test can stop them in time.
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`, SKILL_ENGINE_TIMEOUT_MS: "900000" },
    });
    alice = await stdioClient(engine.app.port, { SKILL_ENGINE_TOKEN: TOKENS.alice }, (text) => stderr.push(text));
  }, 120_000);
  afterAll(async () => {
    await alice?.client.close();
    await engine?.dispose();
  });

  it("lists the tools, registers (a failing test is a tool error with its cause), finds, runs and records an outcome", async () => {
    const { client } = alice;
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["find_skills", "run_skill", "register_skill", "record_outcome", "get_lessons"]));

    const failed = await client.callTool(
      {
        name: "register_skill",
        arguments: {
          name: "inverse",
          description: "inverse of a number",
          parameters_schema: DOUBLER_SCHEMA,
          code: PICKY_CODE,
          test_payload: { n: 0 },
        },
      },
      undefined,
      CALL_OPTIONS,
    );
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toMatch(/ValueError: n must not be zero/);

    const passed = await client.callTool(
      {
        name: "register_skill",
        arguments: {
          name: "doubler",
          description: "Doubles an integer n and returns the doubled value.",
          parameters_schema: JSON.stringify(DOUBLER_SCHEMA),
          code: DOUBLER_CODE,
          test_payload: '{"n": 2}',
        },
      },
      undefined,
      CALL_OPTIONS,
    );
    expect(passed.structuredContent).toMatchObject({ skill: { name: "doubler", owner: "alice" }, test: { success: true } });

    const found = await client.callTool({ name: "find_skills", arguments: { query: "double a number", min_relevance: 0 } });
    const route = found.structuredContent as { route_id: string; skills: Array<{ name: string }> };
    expect(route.skills.map((s) => s.name)).toContain("doubler");
    const run = await client.callTool(
      { name: "run_skill", arguments: { name: "doubler", arguments: { n: 4 }, route_id: route.route_id } },
      undefined,
      CALL_OPTIONS,
    );
    expect(run.structuredContent).toEqual({ doubled: 8 });
    const outcome = await client.callTool({ name: "record_outcome", arguments: { invocation_id: invocationIdOf(run), success: true } });
    expect(outcome.structuredContent).toMatchObject({ exit_code_success: true, overridden: false });
    // stdout carries MCP only: what the bin says goes to stderr.
    expect(stderr.join("")).toContain("serving MCP on stdio");
  });

  it("another agent's bin sees none of alice's private skills; a bin without a token is told so", async () => {
    const bob = await stdioClient(engine.app.port, { SKILL_ENGINE_TOKEN: TOKENS.bob });
    try {
      const listed = await bob.client.callTool({ name: "list_skills", arguments: {} });
      expect((listed.structuredContent as { skills: Array<{ name: string }> }).skills.map((s) => s.name)).not.toContain("doubler");
      const run = await bob.client.callTool({ name: "run_skill", arguments: { name: "doubler", arguments: { n: 1 } } });
      expect(run.isError).toBe(true);
      expect(run._meta?.["skill-engine/code"]).toBe("NOT_FOUND");
    } finally {
      await bob.client.close();
    }
    const nobody = await stdioClient(engine.app.port);
    try {
      const refused = await nobody.client.callTool({ name: "list_skills", arguments: {} });
      expect(refused.isError).toBe(true);
      expect(refused._meta?.["skill-engine/code"]).toBe("UNAUTHENTICATED");
      expect(textOf(refused)).toContain("requires a token");
    } finally {
      await nobody.client.close();
    }
  });

  it("a client that goes away mid-run leaves no container running", async () => {
    const carol = await stdioClient(engine.app.port, { SKILL_ENGINE_TOKEN: TOKENS.alice });
    await carol.client.callTool(
      {
        name: "register_skill",
        arguments: { name: "sleeper", description: "sleeps", parameters_schema: {}, code: SLEEPER_CODE, test_payload: {} },
      },
      undefined,
      CALL_OPTIONS,
    );
    const { call } = await whileItsContainerRuns(engine.instanceTag, () =>
      carol.client.callTool({ name: "run_skill", arguments: { name: "sleeper", arguments: { seconds: 600 } } }, undefined, CALL_OPTIONS),
    );
    // The client closes the bin's stdin and the bin goes: its gRPC call is cancelled, and the run with it.
    await carol.client.close();
    await expect(call).rejects.toThrow();
    await eventually(
      "every sandbox container to be removed",
      async () => ((await containersOf(engine.instanceTag)).length === 0 ? true : undefined),
      { timeoutMs: 60_000 },
    );
  });
});
