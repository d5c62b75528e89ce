import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  ErrorCode,
  McpError,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EmbeddingsTestServer } from "./support/embeddings-test-server.js";
import { eventually } from "./support/poll.js";
import { seedLibrary } from "./support/seeded-library.js";
import { selfSigned } from "./support/self-signed.js";
import {
  CALL_OPTIONS,
  DOUBLER_CODE,
  DOUBLER_SCHEMA,
  httpClient,
  invocationIdOf,
  PICKY_CODE,
  SLEEPER_CODE,
  textOf,
} from "./support/mcp-clients.js";
import {
  containersOf,
  makeDirs,
  metricSamples,
  rpcError,
  startTestEngine,
  type TestEngine,
  whileItsContainerRuns,
} from "./support/test-engine.js";

/** The MCP door over Streamable HTTP (docs/mcp.md), against a real service and engine, with the SDK's own client. */

const TOKENS = { alice: "alice-token-0123456789abcdef", bob: "bob-token-0123456789abcdef" } as const;

async function mcpError(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return error;
    throw error;
  }
  throw new Error("expected a JSON-RPC error, but the call succeeded");
}

describe("MCP over Streamable HTTP: find, run, register, report, resources", () => {
  let engine: TestEngine;
  let root: string;
  let client: Client;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "mcp-http-"));
    const skills = path.join(root, "skills");
    await mkdir(path.join(skills, "notes", "references"), { recursive: true });
    await writeFile(
      path.join(skills, "notes", "SKILL.md"),
      "---\nname: release_notes\ndescription: How to write release notes for a version.\n---\nList the changes, newest first.\n",
    );
    await writeFile(path.join(skills, "notes", "references", "style.md"), "Short sentences.\n");
    engine = await startTestEngine({
      dirs: await makeDirs(),
      // The smallest request limit there is (4 MiB + 1 MiB of input files), for the 413 below.
      env: {
        SKILL_ENGINE_MCP_PORT: "0",
        SKILL_ENGINE_SKILL_DIRS: skills,
        SKILL_ENGINE_SKILL_WATCH: "off",
        SKILL_ENGINE_INPUT_FILES_MB: "1",
      },
    });
    client = (await httpClient(engine.app.mcpPort ?? 0)).client;
  });
  afterAll(async () => {
    await client?.close();
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("lists the meta tools with schemas and annotations, and the prompts", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        "add_lesson",
        "find_skills",
        "get_lessons",
        "get_skill",
        "list_skills",
        "patch_skill",
        "record_outcome",
        "register_skill",
        "route_feedback",
        "run_skill",
      ].sort(),
    );
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("find_skills")?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get("register_skill")?.annotations?.readOnlyHint).toBe(false);
    expect(byName.get("find_skills")?.inputSchema.required).toEqual(["query"]);
    expect(byName.get("find_skills")?.outputSchema).toBeDefined();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["create_skill", "use_skill_library"]);
    const prompt = await client.getPrompt({ name: "create_skill", arguments: { purpose: "double a number" } });
    expect(JSON.stringify(prompt.messages)).toContain("sys.argv[1]");
  });

  it("a registration whose test fails is a tool error with the test run's cause; one that passes is the new version", async () => {
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
    expect(failed._meta?.["skill-engine/code"]).toBe("FAILED_PRECONDITION");
    // Word for word what the gRPC API answers the same registration.
    const grpc = await rpcError(
      engine.client.register({
        name: "inverse",
        description: "inverse of a number",
        parametersSchema: JSON.stringify(DOUBLER_SCHEMA),
        code: PICKY_CODE,
        testPayload: '{"n":0}',
      }),
    );
    expect(grpc.details).toMatch(/ValueError: n must not be zero/);
    expect(textOf(failed).split("\n")[0]).toBe(grpc.details);

    const registerDoubler = {
      name: "register_skill",
      arguments: {
        name: "doubler",
        description: "Doubles an integer n and returns the doubled value.",
        parameters_schema: DOUBLER_SCHEMA,
        code: DOUBLER_CODE,
        test_payload: { n: 2 },
        example_queries: ["double the number 21"],
      },
    };
    const passed = await client.callTool(registerDoubler, undefined, CALL_OPTIONS);
    expect(passed.isError).toBeFalsy();
    expect(passed.structuredContent).toMatchObject({
      skill: { name: "doubler", version: 1, status: "active" },
      test: { success: true },
      unchanged: false,
    });

    // The same registration again (an agent registering its skills at every start): no test run, no new version.
    const again = await client.callTool(registerDoubler, undefined, CALL_OPTIONS);
    expect(again.isError).toBeFalsy();
    expect(again.structuredContent).toMatchObject({ skill: { name: "doubler", version: 1 }, test: null, unchanged: true });
  });

  it("a request nothing in the library fits is an empty list with no_fit", async () => {
    const found = await client.callTool(
      { name: "find_skills", arguments: { query: "book me a flight to Paris" } },
      undefined,
      CALL_OPTIONS,
    );
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent).toMatchObject({ skills: [], no_fit: true });
  });

  it("finds the skill, runs it with the route, and records the outcome of the run", async () => {
    const found = await client.callTool(
      { name: "find_skills", arguments: { query: "double the number 21", min_relevance: 0 } },
      undefined,
      CALL_OPTIONS,
    );
    const route = found.structuredContent as { route_id: string; skills: Array<{ name: string; input_schema: unknown }> };
    expect(route.skills[0]?.name).toBe("doubler");
    expect(route.skills[0]?.input_schema).toEqual(DOUBLER_SCHEMA);

    const run = await client.callTool(
      { name: "run_skill", arguments: { name: "doubler", arguments: { n: 21 }, route_id: route.route_id } },
      undefined,
      CALL_OPTIONS,
    );
    expect(run.isError).toBeFalsy();
    expect(run.structuredContent).toEqual({ doubled: 42 });
    const invocationId = invocationIdOf(run);
    expect(textOf(run)).toContain(`invocation_id: ${invocationId}`);

    const outcome = await client.callTool({
      name: "record_outcome",
      arguments: { invocation_id: invocationId, success: false, note: "wrong" },
    });
    expect(outcome.isError).toBeFalsy();
    expect(outcome.structuredContent).toMatchObject({ exit_code_success: true, overridden: true, skill: { name: "doubler" } });
  });

  it("a run that fails is a tool error with its one-line cause; an unknown skill is a tool error too", async () => {
    await client.callTool(
      {
        name: "register_skill",
        arguments: {
          name: "inverse",
          description: "inverse of a number",
          parameters_schema: DOUBLER_SCHEMA,
          code: PICKY_CODE,
          test_payload: { n: 2 },
        },
      },
      undefined,
      CALL_OPTIONS,
    );
    const run = await client.callTool({ name: "run_skill", arguments: { name: "inverse", arguments: { n: 0 } } }, undefined, CALL_OPTIONS);
    expect(run.isError).toBe(true);
    expect(textOf(run).split("\n")[0]).toMatch(/ValueError: n must not be zero/);
    invocationIdOf(run);
    const unknown = await client.callTool({ name: "run_skill", arguments: { name: "no_such_skill" } });
    expect(unknown.isError).toBe(true);
    expect(unknown._meta?.["skill-engine/code"]).toBe("NOT_FOUND");
  });

  it("an unknown tool, arguments that do not match the schema and an unknown method are JSON-RPC errors naming the problem", async () => {
    const unknownTool = await mcpError(client.callTool({ name: "fly_to_the_moon", arguments: {} }));
    expect(unknownTool.code).toBe(ErrorCode.InvalidParams);
    expect(unknownTool.message).toContain("Unknown tool: fly_to_the_moon");
    const badArguments = await mcpError(client.callTool({ name: "find_skills", arguments: { query: "x", limit: 0 } }));
    expect(badArguments.code).toBe(ErrorCode.InvalidParams);
    expect(badArguments.message).toMatch(/limit:/);
    const missing = await mcpError(client.callTool({ name: "run_skill", arguments: {} }));
    expect(missing.message).toMatch(/name:/);
    const method = await mcpError(client.request({ method: "skills/teleport", params: {} }, ToolListChangedNotificationSchema as never));
    expect(method.code).toBe(ErrorCode.MethodNotFound);
  });

  it("lists a folder skill's SKILL.md and bundled files as skill:// resources and reads them", async () => {
    const { resources } = await eventually("the folder skill's resources", async () => {
      const listed = await client.listResources();
      return listed.resources.some((r) => r.name === "release_notes/SKILL.md") ? listed : undefined;
    });
    const skillMd = resources.find((r) => r.name === "release_notes/SKILL.md");
    expect(skillMd?.description).toBe("How to write release notes for a version.");
    expect(skillMd?.uri).toMatch(/^skill:\/\/[^/]+\/SKILL\.md$/);
    const body = await client.readResource({ uri: skillMd?.uri ?? "" });
    expect(body.contents[0]).toMatchObject({ mimeType: "text/markdown", text: "List the changes, newest first.\n" });
    const style = resources.find((r) => r.name === "release_notes/references/style.md");
    expect((await client.readResource({ uri: style?.uri ?? "" })).contents[0]).toMatchObject({ text: "Short sentences.\n" });
    const missing = await mcpError(client.readResource({ uri: "skill://no-such-id/SKILL.md" }));
    expect(missing.code).toBe(-32002);
  });

  it("malformed JSON is a parse error; a body past the request limit is 413", async () => {
    const url = `http://127.0.0.1:${engine.app.mcpPort}/mcp`;
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    const malformed = await fetch(url, { method: "POST", headers, body: "{not json" });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const huge = await fetch(url, { method: "POST", headers, body: "x".repeat(6 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });
});

describe("MCP over Streamable HTTP: tokens, agents and tool lists", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_MCP_PORT: "0",
        SKILL_ENGINE_MCP_TOOLS: "both",
        SKILL_ENGINE_MCP_POLL_SECONDS: "0.5",
        SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`,
      },
    });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  it("answers 401 with WWW-Authenticate without a valid token, before MCP sees the request", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    };
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
    for (const authorization of [undefined, "Bearer not-a-valid-token-at-all"]) {
      const response = await fetch(`http://127.0.0.1:${engine.app.mcpPort}/mcp`, {
        method: "POST",
        headers: authorization ? { ...headers, authorization } : headers,
        body: JSON.stringify(init),
      });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    }
  });

  it("two agents see only their own private skills, and a registration shows up as a tool with list_changed", async () => {
    const alice = (await httpClient(engine.app.mcpPort ?? 0, TOKENS.alice)).client;
    const bob = (await httpClient(engine.app.mcpPort ?? 0, TOKENS.bob)).client;
    try {
      let changed = 0;
      alice.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        changed += 1;
      });
      const before = (await alice.listTools()).tools.map((t) => t.name);
      expect(before).toContain("find_skills");
      // Wait for the session's first look at the catalog, so that the registration is a change.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      const registered = await alice.callTool(
        {
          name: "register_skill",
          arguments: {
            name: "alice_doubler",
            description: "Doubles n for alice.",
            parameters_schema: DOUBLER_SCHEMA,
            code: DOUBLER_CODE,
            test_payload: { n: 1 },
          },
        },
        undefined,
        CALL_OPTIONS,
      );
      expect(registered.isError).toBeFalsy();
      await eventually("tools/list_changed after the registration", () => (changed > 0 ? true : undefined), { timeoutMs: 60_000 });
      const tools = (await alice.listTools()).tools;
      const own = tools.find((t) => t.name === "alice_doubler");
      expect(own?.description).toContain("[ACQUIRED SKILL");
      expect(own?.inputSchema).toMatchObject(DOUBLER_SCHEMA);
      const run = await alice.callTool({ name: "alice_doubler", arguments: { n: 5 } }, undefined, CALL_OPTIONS);
      expect(run.structuredContent).toEqual({ doubled: 10 });

      // Bob sees none of it: not as a tool, not in a list, not by name.
      expect((await bob.listTools()).tools.map((t) => t.name)).not.toContain("alice_doubler");
      const listed = await bob.callTool({ name: "list_skills", arguments: {} });
      expect((listed.structuredContent as { skills: Array<{ name: string }> }).skills.map((s) => s.name)).not.toContain("alice_doubler");
      const asBob = await bob.callTool({ name: "run_skill", arguments: { name: "alice_doubler", arguments: { n: 1 } } });
      expect(asBob.isError).toBe(true);
      expect(asBob._meta?.["skill-engine/code"]).toBe("NOT_FOUND");
      const direct = await mcpError(bob.callTool({ name: "alice_doubler", arguments: { n: 1 } }));
      expect(direct.message).toContain("Unknown tool");
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe("MCP over Streamable HTTP: a client that cancels or goes away stops the run", () => {
  let engine: TestEngine;
  beforeAll(async () => {
    // Runs sleep 600 s within this limit: only the cancellation under test can stop them in time.
    engine = await startTestEngine({ env: { SKILL_ENGINE_MCP_PORT: "0", SKILL_ENGINE_TIMEOUT_MS: "900000" } });
    await engine.client.register({ name: "sleeper", code: SLEEPER_CODE, testPayload: '{"seconds": 0}' });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  const noContainers = (): Promise<true> =>
    eventually(
      "every sandbox container to be removed",
      async () => ((await containersOf(engine.instanceTag)).length === 0 ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );

  it("notifications/cancelled stops the run and removes its container", async () => {
    const { client } = await httpClient(engine.app.mcpPort ?? 0);
    try {
      const abort = new AbortController();
      const { call } = await whileItsContainerRuns(engine.instanceTag, () =>
        client.callTool({ name: "run_skill", arguments: { name: "sleeper", arguments: { seconds: 600 } } }, undefined, {
          ...CALL_OPTIONS,
          signal: abort.signal,
        }),
      );
      abort.abort("the user changed their mind");
      await expect(call).rejects.toThrow();
      await noContainers();
    } finally {
      await client.close();
    }
  });

  it("a client whose connection drops mid-run leaves no container running", async () => {
    const { client, transport } = await httpClient(engine.app.mcpPort ?? 0);
    const { call } = await whileItsContainerRuns(engine.instanceTag, () =>
      client.callTool({ name: "run_skill", arguments: { name: "sleeper", arguments: { seconds: 600 } } }, undefined, CALL_OPTIONS),
    );
    // Closing the transport aborts its open requests without telling the server: the connection simply goes.
    await transport.close();
    await expect(call).rejects.toThrow();
    await noContainers();
  });
});

describe("MCP over Streamable HTTP: TLS", () => {
  let engine: TestEngine;
  let dir: string;
  let ca: Buffer;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-tls-"));
    const pair = await selfSigned(dir, "server");
    ca = await readFile(pair.certFile);
    engine = await startTestEngine({
      env: { SKILL_ENGINE_MCP_PORT: "0", SKILL_ENGINE_TLS_CERT: pair.certFile, SKILL_ENGINE_TLS_KEY: pair.keyFile },
    });
  });
  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("serves HTTPS with the gRPC port's certificate", async () => {
    const init = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } },
    });
    const answer = await new Promise<{ status: number; session: string | undefined; body: string }>((resolve, reject) => {
      const request = https.request(
        {
          host: "127.0.0.1",
          port: engine.app.mcpPort,
          path: "/mcp",
          method: "POST",
          ca,
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        },
        (response) => {
          let body = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => (body += chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, session: response.headers["mcp-session-id"] as string | undefined, body }),
          );
        },
      );
      request.on("error", reject);
      request.end(init);
    });
    expect(answer.status).toBe(200);
    expect(answer.session).toBeDefined();
    expect(answer.body).toContain('"name":"skill-engine"');
    // Plaintext is not spoken there.
    await expect(fetch(`http://127.0.0.1:${engine.app.mcpPort}/mcp`, { method: "POST", body: init })).rejects.toThrow();
  });
});

describe("MCP over Streamable HTTP: change notifications in a library larger than a catalog page", () => {
  /** More skills than a GetCatalog page (1,000: docs/api.md#pagination), all the local agent's. */
  const SEEDED = Array.from({ length: 1_050 }, (_, i) => `skill_${String(i).padStart(4, "0")}`);
  let embeddings: EmbeddingsTestServer;
  let engine: TestEngine;
  let folders: string;

  beforeAll(async () => {
    embeddings = await EmbeddingsTestServer.start();
    const dirs = await makeDirs();
    folders = path.join(dirs.root, "folders");
    await mkdir(folders, { recursive: true });
    await seedLibrary(dirs.home, SEEDED);
    engine = await startTestEngine({
      dirs,
      env: {
        SKILL_ENGINE_MCP_PORT: "0",
        SKILL_ENGINE_MCP_TOOLS: "skills",
        SKILL_ENGINE_MCP_POLL_SECONDS: "0.5",
        SKILL_ENGINE_SKILL_DIRS: folders,
        SKILL_ENGINE_SKILL_WATCH: "off",
        // Start-up indexes every skill for routing: a loopback embedder keeps that cheap.
        ...embeddings.serviceEnv(),
      },
    });
  }, 300_000);
  afterAll(async () => {
    await engine?.dispose();
    await embeddings?.stop();
  });

  const etag = async (): Promise<string> => (await engine.client.call(engine.client.raw.getCatalog, { pageSize: 1 })).etag;
  const getCatalogCalls = async (): Promise<number> =>
    (await metricSamples(engine, "skill_engine_rpc_requests_total"))
      .filter((s) => s.labels.method === "GetCatalog")
      .reduce((sum, s) => sum + s.value, 0);
  const rescan = () => engine.client.call(engine.client.raw.rescanSkillDirs, {});
  /**
   * Opens `count` sessions of the local agent and waits for their shared poll's first look, their baseline:
   * its etag and both catalog pages, then the etag of the poll after it, which starts only once that look is
   * done. Nothing else reads the catalog while a test waits here.
   */
  const watchingSessions = async (count: number): Promise<Client[]> => {
    const before = await getCatalogCalls();
    const sessions: Client[] = [];
    for (let i = 0; i < count; i += 1) sessions.push((await httpClient(engine.app.mcpPort ?? 0)).client);
    await eventually(
      "the first look at the catalog and the poll after it",
      async () => ((await getCatalogCalls()) >= before + 4 ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    return sessions;
  };

  it("GetCatalog's etag stays through runs and repeated scans, and moves with a registration and a scan that finds a new folder", async () => {
    const first = await etag();
    expect(first).not.toBe("");
    expect(await etag()).toBe(first);
    const run = await engine.client.invoke("skill_0007", "{}");
    expect(run.result?.stdout.trim()).toBe('{"n": 7}');
    expect(await etag()).toBe(first);
    await engine.client.register({ name: "aa_doubler", code: DOUBLER_CODE, testPayload: '{"n": 1}', description: "Doubles n." });
    const registered = await etag();
    expect(registered).not.toBe(first);

    // A scan that finds a folder it did not find before moves it (a broken one: no skill, an entry of its own);
    // the same scan again does not.
    await mkdir(path.join(folders, "broken"));
    await writeFile(path.join(folders, "broken", "SKILL.md"), "---\nname: [unclosed\n---\nbody\n");
    await rescan();
    const scanned = await etag();
    expect(scanned).not.toBe(registered);
    await rescan();
    expect(await etag()).toBe(scanned);
  });

  it("two sessions share the caller's poll; a registration past the first catalog page and a skill switched off send both tools/list_changed", async () => {
    const sessions = await watchingSessions(2);
    try {
      const changed = [0, 0];
      sessions.forEach((session, i) =>
        session.setNotificationHandler(ToolListChangedNotificationSchema, () => {
          changed[i] = (changed[i] ?? 0) + 1;
        }),
      );
      // Named after every seeded skill: it lands on the catalog's second page.
      const registered = await engine.client.register({
        name: "zz_doubler",
        code: DOUBLER_CODE,
        testPayload: '{"n": 1}',
        description: "Doubles n.",
        parametersSchema: JSON.stringify(DOUBLER_SCHEMA),
      });
      expect(registered.skill?.version).toBe(1);
      await eventually("tools/list_changed in both sessions", () => (changed.every((n) => n > 0) ? true : undefined), {
        timeoutMs: 60_000,
      });

      // The tool is there, on the last page of tools/list.
      const toolNames = async (): Promise<string[]> => {
        const names: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await sessions[0]?.listTools(cursor === undefined ? {} : { cursor });
          names.push(...(page?.tools ?? []).map((t) => t.name));
          cursor = page?.nextCursor;
        } while (cursor !== undefined);
        return names;
      };
      const names = await toolNames();
      expect(names.at(-1)).toBe("zz_doubler");
      expect(names.filter((name) => name.startsWith("skill_"))).toEqual(SEEDED);

      // A skill switched off leaves tools/list: the catalog does not show the switch, the poll's ListSkills does.
      const before = [...changed];
      await engine.client.call(engine.client.raw.setSkillEnabled, { name: "skill_1049", enabled: false });
      await eventually(
        "tools/list_changed in both sessions after a skill was switched off",
        () => (changed.every((n, i) => n > (before[i] ?? 0)) ? true : undefined),
        { timeoutMs: 60_000 },
      );
      expect(await toolNames()).not.toContain("skill_1049");
    } finally {
      await Promise.all(sessions.map((session) => session.close()));
    }
  });

  it("a folder skill a scan registers sends resources/list_changed (and no tools/list_changed: it is instructions only)", async () => {
    const [session] = await watchingSessions(1);
    if (!session) throw new Error("no session");
    try {
      let resources = 0;
      let tools = 0;
      session.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
        resources += 1;
      });
      session.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        tools += 1;
      });
      await mkdir(path.join(folders, "notes"));
      await writeFile(
        path.join(folders, "notes", "SKILL.md"),
        "---\nname: zz_notes\ndescription: How to write notes.\n---\nShort lines.\n",
      );
      expect((await rescan()).registered).toEqual(["zz_notes"]);
      await eventually("resources/list_changed after the scan", () => (resources > 0 ? true : undefined), { timeoutMs: 60_000 });
      expect(tools).toBe(0);
      const listed = (await session.listResources()).resources.map((r) => r.name);
      expect(listed).toContain("zz_notes/SKILL.md");
    } finally {
      await session.close();
    }
  });
});
