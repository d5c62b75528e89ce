import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CandidateStatus, type ToolCall } from "../src/gen/skillengine/v1/learning.js";
import { RouteMode, ToolFormat } from "../src/gen/skillengine/v1/routing.js";
import { connect, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01" };

const call = (tool: string, args: unknown): ToolCall => ({ tool, arguments: JSON.stringify(args) });
/** The agent's own tools, never skills of the service: search the code, read a file, look it up on the web. */
const routine = (seed: number, extra: ToolCall[] = []): ToolCall[] => [
  call("grep", { pattern: `TODO-${seed}`, path: "src" }),
  call("read_file", { path: `src/file${seed}.ts` }),
  call("web_search", { query: `error ${seed}` }),
  ...extra,
];

/** Promotion of a routine of the agent's own tools (docs/learning.md#promotion): an instructions-only skill. */
describe("promoting a routine of tools that are not skills makes an instructions-only skill", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;

  beforeAll(async () => {
    // Auto-promotion on: it leaves such routines to a promotion by hand.
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}`, SKILL_ENGINE_AUTO_PROMOTE: "on" },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
  });
  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  const record = (key: string, calls: ToolCall[]) => alice.call(alice.raw.recordSession, { sessionKey: key, toolCalls: calls });
  const openCandidates = async () =>
    (await alice.call(alice.raw.listCandidates, { status: CandidateStatus.CANDIDATE_STATUS_CANDIDATE })).candidates;

  it("describes the steps, the tools and the argument shapes, is routable, disclosable, private and auto-created", async () => {
    for (let i = 1; i <= 3; i++) expect((await record(`s${i}`, routine(i))).promotedSkills).toEqual([]);
    const [candidate] = await openCandidates();
    expect(candidate?.toolSequence.map((s) => s.tool)).toEqual(["grep", "read_file", "web_search"]);
    const promoted = await alice.call(alice.raw.promoteCandidate, { id: candidate?.id ?? 0, name: "", description: "" });
    const name = promoted.skill?.name ?? "";
    expect(name).toBe(candidate?.name);
    expect(promoted.candidate?.status).toBe(CandidateStatus.CANDIDATE_STATUS_PROMOTED);
    expect(promoted.skill).toMatchObject({ version: 1, autoCreated: true, owner: "alice" });

    const content = await alice.call(alice.raw.getSkillContent, { name, skillId: "" });
    expect(content.kind).toBe("instructions");
    expect(content.body).toContain("A routine observed in 3 sessions: 3 tool calls, in this order.");
    expect(content.body).toContain("1. `grep` (one of your own tools) with arguments shaped `{path:string,pattern:string}`");
    expect(content.body).toContain("3. `web_search` (one of your own tools) with arguments shaped `{query:string}`");
    // Shapes, never values.
    expect(content.body).not.toContain("TODO-1");

    const routed = await alice.call(alice.raw.routeSkills, {
      query: "runs grep, read_file and web_search in sequence",
      limit: 5,
      format: ToolFormat.TOOL_FORMAT_OPENAI,
      mode: RouteMode.ROUTE_MODE_FUSED,
      minRelevance: 0,
    });
    expect(routed.skills.find((s) => s.name === name)?.kind).toBe("instructions");
    // Private to the agent whose sessions made it; instructions are read, not run.
    expect((await rpcError(bob.get(name))).code).toBe(status.NOT_FOUND);
    expect((await rpcError(alice.invoke(name, "{}"))).code).toBe(status.FAILED_PRECONDITION);
  });

  it("evolves at 70% overlap or more: a routine with one more step becomes the skill's next version", async () => {
    const summarize = [call("summarize", { text: "notes" })];
    for (let i = 4; i <= 6; i++) await record(`s${i}`, routine(i, summarize));
    const evolving = (await openCandidates()).find((c) => c.toolSequence.length === 4);
    expect(evolving?.toolSequence.map((s) => s.tool)).toEqual(["grep", "read_file", "web_search", "summarize"]);
    const promoted = await alice.call(alice.raw.promoteCandidate, { id: evolving?.id ?? 0, name: "", description: "" });
    expect(promoted.evolution).toMatchObject({ fromVersion: 1, toVersion: 2, overlap: 0.75 });
    expect(promoted.skill?.version).toBe(2);
    const content = await alice.call(alice.raw.getSkillContent, { name: promoted.skill?.name ?? "", skillId: "" });
    expect(content.body).toContain("4. `summarize` (one of your own tools) with arguments shaped `{text:string}`");
  });
});
