import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctl } from "./support/skillctl.js";
import { makeDirs, startTestEngine, type TestEngine } from "./support/test-engine.js";

/** Parses a JUnit report with a real XML parser (CPython's ElementTree), which also rejects malformed XML. */
function parseJUnit(file: string): Promise<{ suite: Record<string, string>; cases: { name: string; failure: string | null }[] }> {
  const script = `import json, sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
suite = root.find("testsuite")
cases = [{"name": c.get("name"), "failure": None if c.find("failure") is None else c.find("failure").get("message")} for c in suite.iter("testcase")]
print(json.dumps({"suite": dict(suite.attrib), "cases": cases}))
`;
  return new Promise((resolve, reject) => {
    execFile(PYTHON, ["-c", script, file], (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    );
  });
}
const PYTHON = existsSync("/usr/bin/python3") ? "/usr/bin/python3" : "python3";

const ADD = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"sum": args["a"] + args["b"]}))
`;
const ADD_SCHEMA = '{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}';
/** Fails when asked to: lets a test drive the outcome of an invocation. */
const FLAKY = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise RuntimeError("asked to fail")
print("fine")
`;
/** Needs about 4 s: passes under the default 10 s run limit, times out under a 2 s one. */
const SLOW = `import time
time.sleep(4)
print("done")
`;

describe("skillctl, the operator CLI, against a real server and engine", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let engine: TestEngine;
  let work: string;
  let port: number;

  beforeAll(async () => {
    dirs = await makeDirs();
    engine = await startTestEngine({ dirs });
    port = engine.app.port;
    work = await mkdtemp(path.join(os.tmpdir(), "skillctl-test-"));
    await writeFile(path.join(work, "add.py"), ADD);
    await writeFile(path.join(work, "add.schema.json"), ADD_SCHEMA);
    await writeFile(path.join(work, "flaky.py"), FLAKY);
    await writeFile(path.join(work, "slow.py"), SLOW);
  });
  afterAll(async () => {
    await engine?.stop();
    await rm(dirs.root, { recursive: true, force: true });
    await rm(work, { recursive: true, force: true });
  });

  it("registers a skill from a file, with a schema file and a test payload", async () => {
    const run = await skillctl(
      port,
      "register",
      path.join(work, "add.py"),
      "--name",
      "add_numbers",
      "--description",
      "Adds two numbers a and b and returns their sum as JSON.",
      "--schema",
      path.join(work, "add.schema.json"),
      "--test-payload",
      '{"a": 1, "b": 2}',
    );
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^registered add_numbers v1 \(active\), private, owner local; test run passed in \d+ ms\n$/);

    const json = await skillctl(
      port,
      "--json",
      "register",
      path.join(work, "flaky.py"),
      "--name",
      "flaky",
      "--description",
      "Prints fine unless told to fail.",
      "--schema-json",
      '{"type":"object","properties":{"fail":{"type":"boolean"}}}',
    );
    expect(json.code).toBe(0);
    const response = JSON.parse(json.stdout) as {
      skill: { name: string; version: number; status: string };
      test: { success: boolean };
      normalizations: string[];
      warnings: unknown[];
    };
    expect(response.skill).toMatchObject({
      name: "flaky",
      version: 1,
      status: "SKILL_STATUS_ACTIVE",
      owner: "local",
      visibility: "VISIBILITY_PRIVATE",
    });
    expect(response.test.success).toBe(true);
    expect(response.normalizations).toEqual([]);
  });

  it("reports a failed registration as the gRPC error, exit code 2", async () => {
    const bad = path.join(work, "broken.py");
    await writeFile(bad, 'raise ValueError("nope")\n');
    const run = await skillctl(port, "register", bad, "--name", "broken", "--description", "Always raises an error when run.");
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^skillctl: FAILED_PRECONDITION: line 1: ValueError: nope/);
    expect(run.stdout).toBe("");
  });

  it("names the test payload when a registration's test run fails, and says when it was the default", async () => {
    const needsText = path.join(work, "needs_text.py");
    await writeFile(needsText, "import json, sys\nprint(json.loads(sys.argv[1])['text'].upper())\n");
    const defaulted = await skillctl(port, "register", needsText, "--name", "shout", "--description", "Upper-cases the text it is given.");
    expect(defaulted.code).toBe(2);
    expect(defaulted.stderr).toMatch(
      /^skillctl: FAILED_PRECONDITION: line 2: KeyError: 'text' \(the test run used the payload \{\}, the default: no --test-payload was given\)\n/,
    );
    const given = await skillctl(
      port,
      "register",
      needsText,
      "--name",
      "shout",
      "--description",
      "Upper-cases the text.",
      "--test-payload",
      '{"txt": "a"}',
    );
    expect(given.stderr).toMatch(
      /^skillctl: FAILED_PRECONDITION: line 2: KeyError: 'text' \(the test run used the payload \{"txt": "a"\}\)\n/,
    );
  });

  it("invokes: stdout for humans, the whole ExecutionResult with --json, exit 1 when the skill fails", async () => {
    const human = await skillctl(port, "invoke", "add_numbers", '{"a": 40, "b": 2}');
    expect(human).toMatchObject({ code: 0, stdout: '{"sum": 42}\n', stderr: "" });

    const json = await skillctl(port, "invoke", "add_numbers", '{"a": 1, "b": 1}', "--json");
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { version: number; result: Record<string, unknown> };
    expect(parsed.version).toBe(1);
    expect(parsed.result).toMatchObject({ exitCode: 0, stdout: '{"sum": 2}\n', success: true, errorSummary: "", timedOut: false });

    const failed = await skillctl(port, "invoke", "flaky", '{"fail": true}');
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("skillctl: flaky v1 failed: line 4: RuntimeError: asked to fail");

    const failedJson = await skillctl(port, "--json", "invoke", "flaky", '{"fail": true}');
    expect(failedJson.code).toBe(1);
    expect(JSON.parse(failedJson.stdout)).toMatchObject({
      result: { success: false, errorSummary: "line 4: RuntimeError: asked to fail" },
    });
  });

  it("maps gRPC errors to 'skillctl: CODE: details' and exit code 2", async () => {
    const unknown = await skillctl(port, "invoke", "no_such_skill");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^skillctl: NOT_FOUND: .*no_such_skill/);

    const badPayload = await skillctl(port, "invoke", "add_numbers", '{"a": "x"}');
    expect(badPayload.code).toBe(2);
    expect(badPayload.stderr).toMatch(/^skillctl: INVALID_ARGUMENT: /);

    const show = await skillctl(port, "show", "no_such_skill");
    expect(show.code).toBe(2);
    expect(show.stderr).toMatch(/^skillctl: NOT_FOUND: /);

    const down = await skillctl(1, "list", "--timeout", "3");
    expect(down.code).toBe(2);
    expect(down.stderr).toMatch(/^skillctl: (UNAVAILABLE|DEADLINE_EXCEEDED): /);
  });

  it("rejects bad command lines before calling anything (exit code 2)", async () => {
    expect(await skillctl(port, "frobnicate")).toMatchObject({ code: 2, stderr: expect.stringContaining("unknown command 'frobnicate'") });
    expect(await skillctl(port, "invoke", "add_numbers", "{not json")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("payload is not valid JSON"),
    });
    expect(await skillctl(port, "list", "--junit", "x.xml")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("'list' does not take --junit"),
    });
    const help = await skillctl(port, "test", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("telemetry");
  });

  it("lists and shows skills", async () => {
    const list = await skillctl(port, "list");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+VERSION\s+STATUS\s+OWNER\s+VISIBILITY\s+USES\s+FAILS\s+DESCRIPTION\n/);
    // Without tokens every caller is the local agent, and a new skill is private to it.
    expect(list.stdout).toMatch(/\nadd_numbers\s+1\s+active\s+local\s+private\s+\d+\s+0\s+Adds two numbers/);
    expect(list.stdout).toMatch(/\nflaky\s+1\s+active/);

    const json = JSON.parse((await skillctl(port, "list", "--json")).stdout) as { skills: { name: string; status: string }[] };
    expect(json.skills.map((s) => s.name)).toEqual(["add_numbers", "flaky"]);

    const show = await skillctl(port, "show", "add_numbers");
    expect(show.code).toBe(0);
    expect(show.stdout).toContain("name:         add_numbers");
    expect(show.stdout).toContain("owner:        local\n");
    expect(show.stdout).toContain("visibility:   private\n");
    expect(show.stdout).toContain('test payload {"a": 1, "b": 2}');
    expect(show.stdout).toContain(`code:\n${ADD}`);

    const showJson = JSON.parse((await skillctl(port, "show", "add_numbers", "--json")).stdout) as {
      code: string;
      versions: { version: number; active: boolean }[];
    };
    expect(showJson.code).toBe(ADD);
    expect(showJson.versions).toMatchObject([{ version: 1, active: true }]);
  });

  it("routes a query, with tool definitions in the requested format", async () => {
    const run = await skillctl(port, "route", "add", "two", "numbers", "--limit", "1", "--format", "anthropic");
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^#\s+NAME\s+RELEVANCE\s+SCORE/);
    expect(run.stdout).toMatch(/\n1\s+add_numbers\s+\d/);
    expect(run.stdout).toContain("route id: ");
    expect(run.stdout).toContain('"input_schema"');

    const json = JSON.parse((await skillctl(port, "--json", "route", "sum of two numbers", "--limit", "1")).stdout) as {
      routeId: string;
      skills: { name: string; toolDefinition: string }[];
    };
    expect(json.routeId).not.toBe("");
    expect(json.skills.map((s) => s.name)).toEqual(["add_numbers"]);
    expect(JSON.parse(json.skills[0]?.toolDefinition ?? "{}")).toMatchObject({ type: "function" });
  });

  it("route --hardening none|short|full chooses what each tool description says about calling it; another value is refused", async () => {
    const described = async (...hardening: string[]): Promise<string> => {
      const run = await skillctl(port, "--json", "route", "sum of two numbers", "--limit", "1", "--min-relevance", "0", ...hardening);
      expect(run.code, run.stderr).toBe(0);
      const json = JSON.parse(run.stdout) as { skills: { name: string; description: string; toolDefinition: string }[] };
      expect(json.skills.map((s) => s.name)).toEqual(["add_numbers"]);
      // The tool definition an LLM is handed carries the same description.
      expect(JSON.parse(json.skills[0]?.toolDefinition ?? "{}")).toMatchObject({ function: { description: json.skills[0]?.description } });
      return json.skills[0]?.description ?? "";
    };
    const registered = (await engine.client.get("add_numbers")).skill?.description ?? "";
    const [none, short, full, unset] = [
      await described("--hardening", "none"),
      await described("--hardening", "short"),
      await described("--hardening", "FULL"),
      await described(),
    ];
    expect(none).toBe(registered);
    expect(short).toBe(`${registered}\nCall it directly as a tool; never wrap it in a script.`);
    expect(unset).toBe(short);
    expect(full).toMatch(/^\[ACQUIRED SKILL — CALL BY NAME\] /);
    expect(full).toContain('Call it directly as the tool "add_numbers", e.g. add_numbers(');
    expect(full.length).toBeGreaterThan(short.length);

    expect(await skillctl(port, "route", "sum of two numbers", "--hardening", "loud")).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("--hardening must be none, short or full, got 'loud'"),
    });
    const help = await skillctl(port, "route", "--help");
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("[--hardening none|short|full]");
  });

  it("deletes, restores, rolls back, retires and wipes the sandbox", async () => {
    const v2 = await skillctl(
      port,
      "register",
      path.join(work, "add.py"),
      "--name",
      "add_numbers",
      "--description",
      "Adds two numbers a and b and returns their sum.",
      "--schema-json",
      ADD_SCHEMA,
      "--test-payload",
      '{"a": 2, "b": 2}',
    );
    expect(v2.stdout).toContain("registered add_numbers v2 (active)");
    expect((await skillctl(port, "rollback", "add_numbers", "1")).stdout).toBe("rolled back: add_numbers v1 (active)\n");
    expect((await skillctl(port, "delete", "flaky")).stdout).toBe("deleted flaky v1 (deleted)\n");
    expect((await skillctl(port, "list")).stdout).not.toContain("flaky");
    expect((await skillctl(port, "list", "--all")).stdout).toMatch(/\nflaky\s+1\s+deleted/);
    expect((await skillctl(port, "restore", "flaky")).stdout).toBe("restored flaky v1 (active)\n");
    expect(await skillctl(port, "retire", "--dry-run")).toMatchObject({ code: 0, stdout: "nothing would be retired\n" });
    // Three failures in a row: the retirement rule's first clause.
    for (let i = 0; i < 3; i++) expect((await skillctl(port, "invoke", "flaky", '{"fail": true}')).code).toBe(1);
    const reason = "failure_count 3 ≥ 3";
    expect(await skillctl(port, "retire", "--dry-run")).toMatchObject({ code: 0, stdout: `would retire flaky: ${reason}\n` });
    expect((await skillctl(port, "list")).stdout).toMatch(/\nflaky\s+1\s+degraded/);
    expect(JSON.parse((await skillctl(port, "retire", "--json")).stdout)).toEqual({
      retired: [{ name: "flaky", reasons: [reason] }],
      dryRun: false,
      kept: [],
    });
    expect((await skillctl(port, "list", "--all")).stdout).toMatch(/\nflaky\s+1\s+retired/);
    expect(await skillctl(port, "retire")).toMatchObject({ code: 0, stdout: "nothing to retire\n" });
    expect((await skillctl(port, "restore", "flaky")).stdout).toBe("restored flaky v1 (active)\n");
    // One skill by hand (RetireSkill), whatever its health.
    expect((await skillctl(port, "retire", "flaky")).stdout).toBe("retired flaky v1 (retired)\n");
    expect((await skillctl(port, "restore", "flaky")).stdout).toBe("restored flaky v1 (active)\n");
    expect(await skillctl(port, "wipe-sandbox")).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^removed \d+ run director(y|ies)\n$/),
    });
    expect((await skillctl(port, "rollback", "add_numbers", "9")).code).toBe(2);
    // Eighteen skillctl processes and a dozen container runs in a row: on a 2-core machine at a load
    // of 15 the chain took just over the suite's 120 s default.
  }, 300_000);

  it("test: re-runs stored tests, reports causes and a summary, writes JUnit XML, exits 1 on a failure", async () => {
    // The slow skill passes its test under the default run limit...
    const slow = await skillctl(
      port,
      "register",
      path.join(work, "slow.py"),
      "--name",
      "slow_skill",
      "--description",
      "Waits four seconds, then prints done.",
    );
    expect(slow.code).toBe(0);
    const allPass = await skillctl(port, "test", "add_numbers", "slow_skill");
    expect(allPass.code).toBe(0);
    expect(allPass.stdout).toMatch(/^PASS add_numbers \(v1, \d+ ms\)\nPASS slow_skill \(v1, \d+ ms\)\n2 passed, 0 failed\n$/);

    // ...and the operator then lowers the limit to 2 s (a restart with the same store): its stored test now fails.
    await engine.stop();
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_TIMEOUT_MS: "2000" } });
    port = engine.app.port;

    const junit = path.join(work, "report & results.xml");
    const run = await skillctl(port, "test", "add_numbers", "slow_skill", "--junit", junit);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^PASS add_numbers \(v1, \d+ ms\)\nFAIL slow_skill \(v1\): timed out after 2000 ms\n1 passed, 1 failed\n$/);
    // Not a TTY: one progress line per skill on stderr (stdout is the report alone).
    expect(run.stderr).toBe("[1/2] testing add_numbers…\n[2/2] testing slow_skill…\n");

    const report1 = await parseJUnit(junit);
    expect(report1.suite).toMatchObject({ tests: "2", failures: "1" });
    expect(report1.cases).toEqual([
      { name: "add_numbers", failure: null },
      { name: "slow_skill", failure: "timed out after 2000 ms" },
    ]);

    // Every listed skill by default; a name that does not exist is a failure with its gRPC cause.
    const all = await skillctl(port, "--json", "test");
    expect(all.code).toBe(1);
    expect(all.stderr).toBe("[1/3] testing add_numbers…\n[2/3] testing flaky…\n[3/3] testing slow_skill…\n");
    const report = JSON.parse(all.stdout) as {
      passed: number;
      failed: number;
      summary: string;
      results: { name: string; passed: boolean; cause: string }[];
    };
    expect(report.results.map((r) => [r.name, r.passed])).toEqual([
      ["add_numbers", true],
      ["flaky", true],
      ["slow_skill", false],
    ]);
    expect(report.summary).toBe("2 passed, 1 failed");

    const missing = await skillctl(port, "test", "flaky", "ghost", "--junit", junit);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toMatch(/\nFAIL ghost: NOT_FOUND: .*ghost.*\n1 passed, 1 failed\n$/);
    // The cause goes through the XML escaping and comes back byte for byte.
    const cause = /\nFAIL ghost: (.*)\n/.exec(missing.stdout)?.[1];
    expect((await parseJUnit(junit)).cases).toEqual([
      { name: "flaky", failure: null },
      { name: "ghost", failure: cause },
    ]);
  });
});
