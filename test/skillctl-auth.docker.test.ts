import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../src/cli/skillctl/main.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctlAs } from "./support/skillctl.js";

const TOKENS = {
  alice: "alice-token-5f0c9d2e8a7b4c61",
  bob: "bob-token-93e1a4f7c2d8b650",
  ops: "ops-token-0d6b2f8e4a9c1735",
};

/** Runs skillctl as a child process (stderr is a pipe, not a TTY), with SKILLCTL_TOKEN when `token` is given. */

/** Greets; `greeting` is the line the patch tests rewrite. */
const GREET = `import json, sys
args = json.loads(sys.argv[1])
greeting = "hello"
print(json.dumps({"greeting": greeting, "name": args.get("name", "world")}))
`;
const ECHO = `import sys
print(sys.argv[1])
`;

describe("skillctl with tokens: identity, scoping and the operator commands", () => {
  let engine: TestEngine;
  let port: number;
  let work: string;
  const as = {
    anonymous: (...args: string[]) => skillctlAs(port, undefined, ...args),
    alice: (...args: string[]) => skillctlAs(port, TOKENS.alice, ...args),
    bob: (...args: string[]) => skillctlAs(port, TOKENS.bob, ...args),
    ops: (...args: string[]) => skillctlAs(port, TOKENS.ops, ...args),
  };

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},ops:admin=${TOKENS.ops}` },
    });
    port = engine.app.port;
    work = await mkdtemp(path.join(os.tmpdir(), "skillctl-auth-"));
    await writeFile(path.join(work, "greet.py"), GREET);
    await writeFile(path.join(work, "echo.py"), ECHO);
  });
  afterAll(async () => {
    await engine?.dispose();
    if (work) await rm(work, { recursive: true, force: true });
  });

  it("without a token: UNAUTHENTICATED, exit code 2, and a hint saying where a token goes", async () => {
    const run = await as.anonymous("list");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(
      /^skillctl: UNAUTHENTICATED: .*\nskillctl: hint: this service requires a token: set SKILLCTL_TOKEN or --token-file\n$/,
    );

    const wrong = await skillctlAs(port, "not-a-valid-token-0000000000", "whoami");
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(
      /^skillctl: UNAUTHENTICATED: .*\nskillctl: hint: the service refused the token from SKILLCTL_TOKEN; set SKILLCTL_TOKEN or --token-file to a valid one\n$/,
    );
    expect(wrong.stderr).not.toContain("not-a-valid-token");

    // `test` stops at the first refusal instead of failing every skill for the caller's reason.
    const tests = await as.anonymous("test", "a", "b");
    expect(tests.code).toBe(2);
    expect(tests.stderr).toContain("skillctl: UNAUTHENTICATED: ");
    expect(tests.stdout).toBe("");
  });

  it("whoami names the agent behind the token, for humans and with --json", async () => {
    expect(await as.alice("whoami")).toEqual({ code: 0, stdout: "alice (not an admin; authenticated by token)\n", stderr: "" });
    expect(await as.ops("whoami")).toMatchObject({ code: 0, stdout: "ops (admin; authenticated by token)\n" });
    const json = await as.bob("--json", "whoami");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({ agentId: "bob", admin: false, authenticated: true });
  });

  it("--token-file: reads the token from a file (over $SKILLCTL_TOKEN), warns when others may read it; there is no --token", async () => {
    const file = path.join(work, "bob.token");
    await writeFile(file, `${TOKENS.bob}\n`);
    await chmod(file, 0o600);
    expect(await skillctlAs(port, undefined, "--token-file", file, "whoami")).toEqual({
      code: 0,
      stdout: "bob (not an admin; authenticated by token)\n",
      stderr: "",
    });
    expect((await skillctlAs(port, TOKENS.alice, "whoami", "--token-file", file)).stdout).toBe(
      "bob (not an admin; authenticated by token)\n",
    );

    await chmod(file, 0o644);
    const loose = await skillctlAs(port, undefined, "--token-file", file, "--json", "whoami");
    expect(loose.code).toBe(0);
    expect(JSON.parse(loose.stdout)).toMatchObject({ agentId: "bob" });
    expect(loose.stderr).toBe(`skillctl: warning: token file ${file} is accessible to other users (mode 644); chmod 600 it\n`);

    const missing = await skillctlAs(port, undefined, "--token-file", path.join(work, "nope"), "whoami");
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^skillctl: cannot read --token-file .*nope: ENOENT\n$/);

    const flag = await skillctlAs(port, undefined, "--token", TOKENS.alice, "whoami");
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain("there is no --token option");
    expect(flag.stderr).not.toContain(TOKENS.alice);
  });

  it("a private skill is invisible to other agents; made public, they can see and invoke it but not change it", async () => {
    const registered = await as.alice(
      "register",
      path.join(work, "greet.py"),
      "--name",
      "alice_greet",
      "--description",
      "Greets a person by name with a configurable greeting.",
    );
    expect(registered.stderr).toBe("");
    expect(registered.code).toBe(0);
    expect(registered.stdout).toMatch(/^registered alice_greet v1 \(active\), private, owner alice; test run passed in \d+ ms\n$/);

    const hidden = await as.bob("show", "alice_greet");
    expect(hidden.code).toBe(2);
    expect(hidden.stderr).toMatch(/^skillctl: NOT_FOUND: .*alice_greet/);
    expect((await as.bob("invoke", "alice_greet")).stderr).toMatch(/^skillctl: NOT_FOUND: /);
    expect((await as.bob("list")).stdout).toBe("no skills\n");

    expect(await as.alice("visibility", "alice_greet", "public")).toEqual({
      code: 0,
      stdout: "alice_greet v1 (active) is public\n",
      stderr: "",
    });

    const shown = await as.bob("show", "alice_greet");
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("owner:        alice\n");
    expect(shown.stdout).toContain("visibility:   public\n");
    expect(await as.bob("invoke", "alice_greet", '{"name": "bob"}')).toEqual({
      code: 0,
      stdout: '{"greeting": "hello", "name": "bob"}\n',
      stderr: "",
    });

    for (const change of [
      ["delete", "alice_greet"],
      ["visibility", "alice_greet", "private"],
      ["protect", "alice_greet"],
    ]) {
      const denied = await as.bob(...change);
      expect(denied.code, change.join(" ")).toBe(2);
      expect(denied.stderr).toMatch(/^skillctl: PERMISSION_DENIED: .*alice_greet.*alice/);
    }
    expect((await as.alice("--json", "show", "alice_greet")).stdout).toContain('"status": "SKILL_STATUS_ACTIVE"');
  });

  it("register --public, list with owner and visibility columns, list --owner", async () => {
    const registered = await as.bob(
      "--json",
      "register",
      path.join(work, "echo.py"),
      "--name",
      "bob_echo",
      "--description",
      "Echoes its JSON payload back unchanged.",
      "--public",
    );
    expect(registered.code).toBe(0);
    expect(JSON.parse(registered.stdout)).toMatchObject({ skill: { name: "bob_echo", owner: "bob", visibility: "VISIBILITY_PUBLIC" } });
    expect(
      (await as.alice("register", path.join(work, "echo.py"), "--name", "alice_secret", "--description", "Echoes its payload, privately."))
        .code,
    ).toBe(0);
    expect(
      (await as.alice("register", path.join(work, "echo.py"), "--name", "x", "--description", "Both flags.", "--public", "--private"))
        .stderr,
    ).toContain("give --public or --private, not both");

    const list = await as.bob("list");
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^NAME\s+VERSION\s+STATUS\s+OWNER\s+VISIBILITY\s+USES\s+FAILS\s+DESCRIPTION\n/);
    expect(list.stdout).toMatch(/\nalice_greet\s+1\s+active\s+alice\s+public\s+/);
    expect(list.stdout).toMatch(/\nbob_echo\s+1\s+active\s+bob\s+public\s+/);
    expect(list.stdout).not.toContain("alice_secret");

    const mine = JSON.parse((await as.alice("--json", "list", "--owner", "alice")).stdout) as {
      skills: { name: string; owner: string; visibility: string }[];
    };
    expect(mine.skills.map((s) => [s.name, s.owner, s.visibility])).toEqual([
      ["alice_greet", "alice", "VISIBILITY_PUBLIC"],
      ["alice_secret", "alice", "VISIBILITY_PRIVATE"],
    ]);
    expect((await as.bob("list", "--owner", "alice")).stdout).toMatch(/^NAME.*\nalice_greet\s.*\n$/);
    expect(await as.bob("list", "--owner", "carol")).toEqual({ code: 0, stdout: "no skills of carol\n", stderr: "" });
  });

  it("transfer is for admins: ops gives a skill to bob, who may then change it", async () => {
    const denied = await as.alice("transfer", "alice_secret", "bob");
    expect(denied.code).toBe(2);
    expect(denied.stderr).toMatch(/^skillctl: PERMISSION_DENIED: TransferSkill is for admins/);

    expect(await as.ops("transfer", "alice_secret", "bob")).toEqual({
      code: 0,
      stdout: "transferred alice_secret v1 (active) to bob\n",
      stderr: "",
    });
    expect((await as.bob("show", "alice_secret")).stdout).toContain("owner:        bob\n");
    expect(await as.bob("unprotect", "alice_secret")).toEqual({ code: 0, stdout: "unprotected alice_secret v1 (active)\n", stderr: "" });
    expect((await as.alice("show", "alice_secret")).stderr).toMatch(/^skillctl: NOT_FOUND: /);

    const json = await as.ops("--json", "transfer", "alice_secret", "alice");
    expect(JSON.parse(json.stdout)).toMatchObject({ skill: { name: "alice_secret", owner: "alice", visibility: "VISIBILITY_PRIVATE" } });
    expect((await as.ops("transfer", "alice_secret", "not a valid id")).stderr).toMatch(/^skillctl: INVALID_ARGUMENT: /);
  });

  it("rebuild and wipe-sandbox are for admins; rebuild reports skills indexed, repairs and duration, with a progress line on stderr", async () => {
    const rebuilt = await as.ops("rebuild");
    expect(rebuilt.code).toBe(0);
    expect(rebuilt.stdout).toMatch(/^rebuilt: 3 skills indexed, 0 repairs, \d+ ms\n$/);
    expect(rebuilt.stderr).toMatch(/^rebuilding indexes.*…\n$/);

    const json = await as.ops("--json", "rebuild");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ skillsIndexed: 3, repairs: [] });
    expect(json.stderr).toMatch(/^rebuilding indexes/);

    const noRebuild = await as.bob("rebuild");
    expect(noRebuild.code).toBe(2);
    expect(noRebuild.stdout).toBe("");
    expect(noRebuild.stderr).toMatch(/^rebuilding indexes.*…\nskillctl: PERMISSION_DENIED: RebuildIndexes is for admins; agent "bob"/);
    const noWipe = await as.bob("wipe-sandbox");
    expect(noWipe.code).toBe(2);
    expect(noWipe.stdout).toBe("");
    expect(noWipe.stderr).toMatch(/^skillctl: PERMISSION_DENIED: WipeSandbox is for admins; agent "bob"/);
    expect(await as.ops("wipe-sandbox")).toMatchObject({ code: 0, stdout: expect.stringMatching(/^removed \d+ run director(y|ies)\n$/) });
  });

  it("patch (inline and from files), protect, unprotect, versions and stats, for humans and with --json", async () => {
    const inline = await as.alice("patch", "alice_greet", "--find", 'greeting = "hello"', "--replace", 'greeting = "hi"');
    expect(inline.stderr).toBe("");
    expect(inline.code).toBe(0);
    expect(inline.stdout).toMatch(/^patched alice_greet v2 \(active\), public, owner alice; test run passed in \d+ ms\n$/);

    const find = path.join(work, "find.txt");
    const replace = path.join(work, "replace.txt");
    await writeFile(find, 'greeting = "hi"\n');
    await writeFile(replace, 'greeting = "hi"\ngreeting = greeting.upper()\n');
    const fromFiles = await as.alice(
      "--json",
      "patch",
      "alice_greet",
      "--find-file",
      find,
      "--replace-file",
      replace,
      "--test-payload",
      '{"name": "test"}',
    );
    expect(fromFiles.code).toBe(0);
    const patched = JSON.parse(fromFiles.stdout) as { skill: Record<string, unknown>; test: { success: boolean; stdout: string } };
    expect(patched.skill).toMatchObject({
      name: "alice_greet",
      version: 3,
      status: "SKILL_STATUS_ACTIVE",
      visibility: "VISIBILITY_PUBLIC",
    });
    expect(patched.test).toMatchObject({ success: true, stdout: '{"greeting": "HI", "name": "test"}\n' });
    expect((await as.bob("invoke", "alice_greet")).stdout).toBe('{"greeting": "HI", "name": "world"}\n');

    const absent = await as.alice("patch", "alice_greet", "--find", "no such text", "--replace", "x");
    expect(absent.code).toBe(2);
    expect(absent.stderr).toMatch(/^skillctl: INVALID_ARGUMENT: /);
    const failing = await as.alice(
      "patch",
      "alice_greet",
      "--find",
      "greeting = greeting.upper()",
      "--replace",
      'raise SystemExit("broken")',
    );
    expect(failing.code).toBe(2);
    expect(failing.stderr).toMatch(/^skillctl: FAILED_PRECONDITION: .*broken/);
    expect((await as.alice("patch", "alice_greet", "--replace", "x")).stderr).toContain("patch needs --find or --find-file");
    expect((await as.alice("patch", "alice_greet", "--find", "a", "--find-file", find, "--replace", "")).stderr).toContain(
      "give --find or --find-file, not both",
    );
    expect((await as.bob("patch", "alice_greet", "--find", "hi", "--replace", "yo")).stderr).toMatch(/^skillctl: PERMISSION_DENIED: /);

    expect(await as.alice("protect", "alice_greet")).toEqual({ code: 0, stdout: "protected alice_greet v3 (active)\n", stderr: "" });
    const list = await as.alice("list", "--owner", "alice");
    expect(list.stdout).toMatch(/\nalice_greet\s+3\s+active\*\s+alice\s+public/);
    expect(list.stdout).toContain("(* protected: never deprecated or retired automatically)\n");
    expect((await as.alice("show", "alice_greet")).stdout).toContain("protected:    yes\n");
    const unprotected = await as.alice("--json", "unprotect", "alice_greet");
    expect(JSON.parse(unprotected.stdout)).toMatchObject({ skill: { name: "alice_greet", protected: false } });

    const versions = await as.bob("versions", "alice_greet");
    expect(versions.code).toBe(0);
    expect(versions.stdout).toMatch(
      /^ {4}v1\s+register\s+\S+\s+[0-9a-f]{12}\s+test payload \{\}\n {4}v2\s+patch\s+.*\n {2}\* v3\s+patch\s+.*test payload \{"name": "test"\}\n$/,
    );
    const versionsJson = JSON.parse((await as.alice("--json", "versions", "alice_greet")).stdout) as {
      versions: { version: number; origin: string; active: boolean }[];
    };
    expect(versionsJson.versions.map((v) => [v.version, v.origin, v.active])).toEqual([
      [1, "register", false],
      [2, "patch", false],
      [3, "patch", true],
    ]);

    const stats = await as.alice("stats", "alice_greet");
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(
      /^name: +alice_greet\nversion: +3\nstatus: +active\nowner: +alice\nvisibility: +public\nage: +\d+\.\d days\n/,
    );
    // One invocation of v3 (bob's, above): too few samples for a rate, enough for percentiles.
    expect(stats.stdout).toContain("\nsuccess rate: - (1 sample in the rolling window; not enough to judge yet)\n");
    expect(stats.stdout).toMatch(/\nvelocity: +\d+\.\d invocations\/day \(last 7 days\)\n/);
    expect(stats.stdout).toMatch(/\nduration: +p50 \d+ ms, p95 \d+ ms\n/);
    expect(stats.stdout).toMatch(/\ninvocations: +\d+ total, \d+ successful\nauto-created: no\n$/);
    const statsJson = JSON.parse((await as.alice("--json", "stats", "alice_greet")).stdout) as Record<string, unknown> & {
      skill: Record<string, unknown>;
    };
    expect(statsJson).toMatchObject({ name: "alice_greet", version: 3, windowSamples: 1, windowSuccesses: 1 });
    expect(statsJson.skill).toMatchObject({ owner: "alice", visibility: "VISIBILITY_PUBLIC" });
    expect((await as.anonymous("stats", "alice_greet")).code).toBe(2);
  });

  it("test prints a progress line: rewritten in place on a terminal, never on stdout (in process, stderr as a TTY)", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (t: string) => void out.push(t), err: (t: string) => void err.push(t), errIsTty: true };
    const env = { SKILLCTL_TOKEN: TOKENS.alice };
    const code = await main(["--address", `127.0.0.1:${port}`, "--json", "test", "alice_greet", "bob_echo"], env, io);
    expect(code).toBe(0);
    expect(JSON.parse(out.join(""))).toMatchObject({ passed: 2, failed: 0, summary: "2 passed, 0 failed" });
    expect(err.join("")).toBe("\r\x1b[K[1/2] testing alice_greet…\r\x1b[K\r\x1b[K[2/2] testing bob_echo…\r\x1b[K");

    // rebuild too: the line is erased once the answer is in; stdout holds only the result.
    out.length = 0;
    err.length = 0;
    expect(await main(["--address", `127.0.0.1:${port}`, "rebuild"], { SKILLCTL_TOKEN: TOKENS.ops }, io)).toBe(0);
    expect(out.join("")).toMatch(/^rebuilt: \d+ skills indexed/);
    expect(err.join("")).toMatch(/^\r\x1b\[Krebuilding indexes.*…\r\x1b\[K$/);
  });
});
