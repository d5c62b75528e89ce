import { readdir, readFile } from "node:fs/promises";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ComposedStep, OnFailure, type RegisterComposedSkillRequest } from "../src/gen/skillengine/v1/composition.js";
import { connect, containersOf, makeDirs, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";
import { eventually } from "./support/poll.js";
import { writeTokensFile } from "./support/tokens-file.js";

/**
 * Hostile compositions (docs/composition.md#where-conditions-run, docs/security.md#composition-conditions):
 * a condition that would build a huge value in one built-in call, one that runs away where no bound
 * applies, and JSON nested deeper than anything walks it. Each is the composition's own failure;
 * the service, and every other agent, carry on.
 */

const TOKENS = { alice: "alice-token-hostile-compositions", bob: "bob-token-hostile-compositions" } as const;
const ECHO = `import json, sys
print(json.dumps({"echo": json.loads(sys.argv[1])}))
`;
const GO_SCHEMA = JSON.stringify({ type: "object", properties: { go: { type: "boolean" } } });
/** One built-in call that would build a 250-million-character string (it aborted the whole service). */
const PAD = '$length($pad("x", 250000000)) > 0';
/** Doubles a string 28 times, then counts it: no bound on a single call applies, only the evaluator's own limits. */
const DOUBLING = '($f := function($s, $n) { $n = 0 ? $s : $f($s & $s, $n - 1) }; $length($f("x", 28)) > 0)';
const gated = (condition: string): string => `params.go = true ? (${condition}) : false`;
/** JSON text of `levels` arrays inside each other. */
const nested = (levels: number): string => `${"[".repeat(levels)}${"]".repeat(levels)}`;

function step(id: string, skill: string, args: unknown, more: Partial<ComposedStep> = {}): ComposedStep {
  return {
    id,
    skill,
    args: typeof args === "string" ? args : JSON.stringify(args),
    when: "",
    onFailure: OnFailure.ON_FAILURE_UNSPECIFIED,
    ...more,
  };
}

/** Child processes of this process running the condition host's program. */
async function evaluatorProcesses(): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = await readFile(`/proc/${entry}/stat`, "utf8");
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent !== process.pid) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, "utf8")).includes("condition-host-main")) found.push(Number(entry));
    } catch {
      // The process ended while it was being read.
    }
  }
  return found;
}

describe("hostile compositions through a real server: a runaway condition or deep JSON fails the composition, never the service", () => {
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  const composed = (request: Partial<RegisterComposedSkillRequest> & { name: string; steps: ComposedStep[] }) =>
    alice.call(alice.raw.registerComposedSkill, {
      description: "a hostile composed test skill",
      parametersSchema: GO_SCHEMA,
      output: "",
      testPayload: '{"go": false}',
      visibility: 0,
      exampleQueries: [],
      onDuplicate: 0,
      ...request,
    });
  const bobIsServed = async (): Promise<void> => {
    expect((await bob.call(bob.raw.whoAmI, {})).agentId).toBe("bob");
    expect((await bob.list()).skills).toBeDefined();
  };

  beforeAll(async () => {
    const dirs = await makeDirs();
    const tokensFile = await writeTokensFile(dirs.root, [
      { agent: "alice", token: TOKENS.alice },
      { agent: "bob", token: TOKENS.bob },
    ]);
    // The warm pool on, as when the crash left warm containers behind.
    engine = await startTestEngine({
      dirs,
      env: { SKILL_ENGINE_TOKENS_FILE: tokensFile, SKILL_ENGINE_POOL: "on", SKILL_ENGINE_POOL_SIZE: "1" },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    await alice.register({ name: "echo", code: ECHO });
  });
  afterAll(async () => {
    alice?.close();
    bob?.close();
    await engine?.dispose();
  });

  it("fails the registration's test run of a condition that would build a 250-million-character string, naming the cause", async () => {
    const refused = await rpcError(
      composed({ name: "pad_now", steps: [step("big", "echo", {}, { when: PAD }), step("after", "echo", {})] }),
    );
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toMatch(
      /step "big" \(echo\) failed: condition "\$length\(\$pad\(\\"x\\", 250000000\)\) > 0" failed: \$pad would build a string of 250000000 characters; the limit is 1000000/,
    );
    await bobIsServed();
    expect((await alice.list()).skills.map((s) => s.name)).not.toContain("pad_now");
  });

  it("gated on a parameter, passes registration, then fails in-band on InvokeSkill while other agents are served", async () => {
    const registered = await composed({
      name: "pad_later",
      steps: [step("big", "echo", {}, { when: gated(PAD) }), step("after", "echo", { go: "{{params.go}}" })],
    });
    expect(registered.test?.success).toBe(true);
    expect(registered.steps.map((s) => [s.id, s.skipped])).toEqual([
      ["big", true],
      ["after", false],
    ]);

    const invoked = await alice.invoke("pad_later", '{"go": true}');
    expect(invoked.result).toMatchObject({ success: false, exitCode: 1 });
    expect(invoked.result?.errorSummary).toMatch(
      /^step "big" \(echo\) failed: condition ".*" failed: \$pad would build a string of 250000000 characters/,
    );
    expect(invoked.steps[0]?.error).toMatch(/\$pad would build a string of 250000000 characters; the limit is 1000000/);
    expect(invoked.steps.map((s) => s.id)).toEqual(["big"]);
    await bobIsServed();
    // The same composition still runs when the condition is false.
    expect((await alice.invoke("pad_later", '{"go": false}')).result).toMatchObject({ success: true, stdout: '{"echo": {"go": false}}\n' });
  });

  it("stops a runaway no bound catches in the evaluator's own process; another agent is answered meanwhile, and the next condition gets a fresh process", async () => {
    await composed({ name: "doubling", steps: [step("big", "echo", {}, { when: gated(DOUBLING) }), step("after", "echo", {})] });
    const [before] = await evaluatorProcesses();
    expect(before).toBeDefined();

    const runaway = alice.invoke("doubling", '{"go": true}');
    runaway.catch(() => undefined); // awaited below
    await bobIsServed();
    const result = (await runaway).result;
    // Whichever of the evaluator's limits comes first on this machine: its wall clock or its heap.
    expect(result?.success).toBe(false);
    expect(result?.errorSummary).toMatch(
      /^step "big" \(echo\) failed: condition ".*" failed: it (ran longer than 1000 ms|ran out of memory \(the evaluator's 256 MiB\)) and was stopped$/,
    );

    expect((await alice.invoke("pad_later", '{"go": false}')).result?.success).toBe(true);
    const after = await evaluatorProcesses();
    expect(after).toHaveLength(1);
    expect(after).not.toContain(before);
  });

  it("refuses step args nested 30,000 levels deep, and a payload as deep, as INVALID_ARGUMENT naming the rule", async () => {
    const deepArgs = await rpcError(composed({ name: "deep_args", steps: [step("a", "echo", nested(30_000))] }));
    expect(deepArgs.code).toBe(status.INVALID_ARGUMENT);
    expect(deepArgs.details).toBe(
      "steps[0].args: nests arrays and objects more than 128 levels deep; JSON in a composition nests at most 128 levels",
    );

    const deepOutput = await rpcError(composed({ name: "deep_output", steps: [step("a", "echo", {})], output: nested(30_000) }));
    expect(deepOutput.code).toBe(status.INVALID_ARGUMENT);
    expect(deepOutput.details).toMatch(/^output: nests arrays and objects more than 128 levels deep/);

    const deepPayload = await rpcError(alice.invoke("pad_later", `{"go": true, "extra": ${nested(30_000)}}`));
    expect(deepPayload.code).toBe(status.INVALID_ARGUMENT);
    // Every skill's payload is held to the same depth before anything walks it (docs/skill-lifecycle.md#input-limits).
    expect(deepPayload.details).toBe("payload: nests arrays and objects more than 128 levels deep; the limit is 128");
    await bobIsServed();
  });

  it("stops cleanly: the evaluator's process ends with the service, and no container is left", async () => {
    expect(await evaluatorProcesses()).toHaveLength(1);
    await engine.stop();
    expect(await evaluatorProcesses()).toEqual([]);
    // A finished run's container is removed moments after its answer (docs/performance.md#container-removal).
    await eventually(
      "no container of the service left",
      async () => ((await containersOf(engine.instanceTag)).length === 0 ? true : undefined),
      {
        timeoutMs: 30_000,
      },
    );
  });
});
