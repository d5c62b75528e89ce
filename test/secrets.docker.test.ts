import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { readdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type ClientUnaryCall, Metadata, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Visibility } from "../src/gen/skillengine/v1/skills.js";
import { packBundle, unpackBundle } from "../src/sources/index.js";
import { eventually } from "./support/poll.js";
import {
  connect,
  containersOf,
  docker,
  makeDirs,
  rpcError,
  runsByPath,
  startTestEngine,
  type TestClient,
  type TestEngine,
} from "./support/test-engine.js";
import { readMirrorSkills } from "./support/registry-mirror.js";

const run = promisify(execFile);
const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * Secrets through the real server (docs/security.md#declaring-and-delivering, #redaction): SetSecret,
 * a skill that declares WEATHER_API_KEY, runs with each caller's own value, and everything the
 * service returns, logs or keeps checked for the values in clear.
 */
const TOKENS = { alice: "alice-0123456789abcdef", bob: "bob-0123456789abcdef01", carol: "carol-0123456789abcdef" };
const NAME = "WEATHER_API_KEY";
const MARK = `[secret:${NAME}]`;
/** Values with characters every encoding changes (space, /, +, =, ?, é), unique to this run of the suite. */
const ALICE = `sk alice/${randomBytes(8).toString("hex")}+=?é`;
const BOB = `sk bob/${randomBytes(8).toString("hex")}+=?ü`;
/** The process name a waiting run takes once it holds its value. */
const ASLEEP = "skill-asleep";

/**
 * Prints its secret plainly, as base64 (standard and URL-safe), hex and URL-encoded, to stderr, into a
 * returned file and, when asked, into the exception that ends it; and a digest that tells whose value
 * it got without showing it. `{"wait": true}` renames its process (what the host sees in
 * /proc/<pid>/comm) once it holds the value, and sleeps, so the test can look at the run from outside.
 */
const CODE = `import base64, hashlib, json, os, sys, time, urllib.parse
args = json.loads(sys.argv[1])
v = os.environ["${NAME}"]
if args.get("wait"):
    import ctypes
    ctypes.CDLL(None).prctl(15, b"${ASLEEP}", 0, 0, 0)
    time.sleep(600)
b = v.encode()
print("plain", v)
print("b64", base64.b64encode(b).decode())
print("b64url", base64.urlsafe_b64encode(b).decode().rstrip("="))
print("hex", b.hex(), b.hex().upper())
print("url", urllib.parse.quote(v, safe=""), urllib.parse.quote_plus(v))
print("json", json.dumps({"key": v}))
print("digest", hashlib.sha256(b).hexdigest())
print("stderr", v, file=sys.stderr)
with open("/sandbox/out/key.txt", "w") as f:
    f.write("key=" + v + "\\n")
if args.get("fail"):
    raise ValueError("bad key " + v)
`;

const digest = (value: string): string => createHash("sha256").update(value, "utf8").digest("hex");

/** Every form of a value the service must never hold or show in clear. */
function forms(value: string): string[] {
  const bytes = Buffer.from(value, "utf8");
  return [value, bytes.toString("base64"), bytes.toString("base64url"), bytes.toString("hex"), encodeURIComponent(value)];
}

/** The forms of any of `values` found in `text`. */
function leaks(text: string, values: readonly string[] = [ALICE, BOB]): string[] {
  return values.flatMap(forms).filter((form) => text.includes(form));
}

/** Every regular file under `dir`, with its bytes (latin1, so any byte sequence can be searched). */
async function filesUnder(dir: string): Promise<Array<{ file: string; text: string }>> {
  const found: Array<{ file: string; text: string }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    const bytes = await readFile(file).catch(() => undefined);
    if (bytes) found.push({ file, text: `${bytes.toString("latin1")}\n${bytes.toString("utf8")}` });
  }
  return found;
}

/** The files of `dir` holding a value in clear, with what was found. */
async function leakingFiles(dir: string): Promise<string[]> {
  return (await filesUnder(dir)).flatMap(({ file, text }) => leaks(text).map((form) => `${file}: ${form}`));
}

/** The names (comm) of every process on the host. */
async function processNames(): Promise<string[]> {
  const pids = (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry));
  return Promise.all(pids.map(async (pid) => (await readFile(`/proc/${pid}/comm`, "utf8").catch(() => "")).trim()));
}

/** The command lines and (where readable) initial environments of every process on the host holding a value. */
async function leakingProcesses(): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await readdir("/proc")).filter((entry) => /^\d+$/.test(entry))) {
    for (const part of ["cmdline", "environ"]) {
      const bytes = await readFile(`/proc/${pid}/${part}`).catch(() => undefined);
      if (bytes && leaks(bytes.toString("utf8")).length > 0) found.push(`/proc/${pid}/${part}`);
    }
  }
  return found;
}

describe("secrets: declared, delivered to the invoking agent's runs, redacted from everything (real engine)", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  let carol: TestClient;
  const logLines: string[] = [];

  const start = async (): Promise<void> => {
    engine = await startTestEngine({
      dirs,
      env: {
        SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},carol=${TOKENS.carol}`,
        SKILL_ENGINE_LOG_LEVEL: "debug",
      },
      logs: { write: (line) => void logLines.push(line) },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    carol = connect(engine.app.port, TOKENS.carol);
  };
  const stop = async (): Promise<void> => {
    for (const client of [alice, bob, carol]) client?.close();
    await engine?.stop();
  };
  const setSecret = (client: TestClient, value: string) => client.call(client.raw.setSecret, { name: NAME, value });
  const invoke = (client: TestClient, payload = "{}") => client.invoke("weather", payload, 120_000);

  beforeAll(async () => {
    dirs = await makeDirs();
    await start();
  }, 120_000);
  afterAll(async () => {
    await stop();
    await rm(dirs.root, { recursive: true, force: true });
  });

  it("refuses a registration whose caller has not set a declared secret, before any container starts", async () => {
    const before = await runsByPath(engine, "test");
    const refused = await rpcError(alice.register({ name: "weather", code: CODE, secrets: [NAME] }));
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    expect(refused.details).toBe(`skill weather needs secret ${NAME}: set it with SetSecret`);
    expect(await runsByPath(engine, "test")).toEqual(before);
    // Names follow the rules; the message names the entry.
    const badName = await rpcError(alice.register({ name: "weather", code: CODE, secrets: [NAME, "not-a-name"] }));
    expect([badName.code, badName.details]).toEqual([
      status.INVALID_ARGUMENT,
      expect.stringMatching(/^secrets\[1\]: "not-a-name" is not a secret name/),
    ]);
  }, 120_000);

  it("the registration's test run uses the registering agent's value, and every form of it comes back redacted", async () => {
    await setSecret(alice, ALICE);
    const registered = await alice.register(
      { name: "weather", code: CODE, secrets: [NAME], description: "Reads the weather API key." },
      120_000,
    );
    expect(registered.skill?.secrets).toEqual([NAME]);
    // The content guard does not flag reading a declared secret.
    expect(registered.warnings.map((w) => w.ruleId)).not.toContain("credential-env-secret-read");
    const stdout = registered.test?.stdout ?? "";
    expect(stdout).toContain(`digest ${digest(ALICE)}`);
    expect(leaks(JSON.stringify(registered))).toEqual([]);
    for (const line of ["plain", "b64", "b64url"]) expect(stdout).toContain(`${line} ${MARK}\n`);
    expect(stdout).toContain(`hex ${MARK} ${MARK}\n`);
    expect(stdout).toContain(`url ${MARK} ${MARK}\n`);
    expect(stdout).toContain(`json {"key": "${MARK}"}\n`);
    expect(registered.test?.stderr).toBe(`stderr ${MARK}\n`);
    expect(Buffer.from(registered.testFiles[0]?.content ?? []).toString()).toBe(`key=${MARK}\n`);
  }, 180_000);

  it("an invocation's stdout, stderr, error summary and returned files hold the mark, never the value", async () => {
    const failed = await invoke(alice, '{"fail": true}');
    expect(failed.result?.success).toBe(false);
    expect(failed.result?.errorSummary).toBe(`line 20: ValueError: bad key ${MARK}`);
    expect(failed.result?.stderr).toContain(`ValueError: bad key ${MARK}`);
    expect(Buffer.from(failed.files[0]?.content ?? []).toString()).toBe(`key=${MARK}\n`);
    expect(failed.files[0]?.sha256).toBe(createHash("sha256").update(`key=${MARK}\n`).digest("hex"));
    expect(leaks(JSON.stringify(failed))).toEqual([]);
  }, 120_000);

  it("during a run, neither docker inspect of its container, nor any host process's command line, nor any file holds the value", async () => {
    const metadata = new Metadata();
    metadata.set("authorization", `Bearer ${TOKENS.alice}`);
    let call: ClientUnaryCall | undefined;
    const answered = new Promise<unknown>((resolve) => {
      call = alice.raw.invokeSkill(
        { name: "weather", payload: '{"wait": true}', payloadJson: undefined, routeId: "", files: [] },
        metadata,
        (error) => resolve(error),
      );
    });
    // The skill has read its value and renamed its process: the run holds the value now.
    await eventually("the skill to hold its value and sleep", async () => ((await processNames()).includes(ASLEEP) ? true : undefined), {
      timeoutMs: 90_000,
    });
    const container = (await containersOf(engine.instanceTag)).find((c) => c.State === "running");
    expect(container).toBeDefined();
    const inspected = JSON.stringify(await docker.getContainer(container?.Id ?? "").inspect());
    expect(leaks(inspected)).toEqual([]);
    expect(await leakingProcesses()).toEqual([]);
    expect(await leakingFiles(dirs.sandboxDir)).toEqual([]);
    expect(await leakingFiles(dirs.home)).toEqual([]);
    call?.cancel();
    expect(await answered).toMatchObject({ code: status.CANCELLED });
  }, 180_000);

  it("a granted skill runs with each caller's own value; a caller without one gets FAILED_PRECONDITION and nothing is counted", async () => {
    await alice.call(alice.raw.grantSkill, { name: "weather", granteeAgent: "bob", granteeUser: "", version: 0 });
    await alice.call(alice.raw.grantSkill, { name: "weather", granteeAgent: "carol", granteeUser: "", version: 0 });
    await setSecret(bob, BOB);
    const byBob = await invoke(bob);
    expect(byBob.result?.stdout).toContain(`digest ${digest(BOB)}`);
    expect(byBob.result?.stdout).toContain(`plain ${MARK}\n`);
    const byAlice = await invoke(alice);
    expect(byAlice.result?.stdout).toContain(`digest ${digest(ALICE)}`);
    expect(leaks(JSON.stringify([byBob, byAlice]))).toEqual([]);

    const counted = async () => {
      const skill = (await alice.get("weather")).skill;
      const stats = await alice.call(alice.raw.getSkillStats, { name: "weather" });
      return { usage: skill?.usageCount, failures: skill?.failureCount, invocations: stats.totalInvocations };
    };
    const before = { counts: await counted(), runs: await runsByPath(engine, "invoke") };
    const refused = await rpcError(invoke(carol));
    expect([refused.code, refused.details]).toEqual([
      status.FAILED_PRECONDITION,
      `skill weather needs secret ${NAME}: set it with SetSecret`,
    ]);
    expect({ counts: await counted(), runs: await runsByPath(engine, "invoke") }).toEqual(before);
  }, 180_000);

  it("PatchSkill keeps the declaration; GetSkill, ExportSkill, the mirror and every file of the home name it and never hold a value", async () => {
    const patched = await alice.call(
      alice.raw.patchSkill,
      { name: "weather", find: 'print("plain", v)', replace: 'print("plain:", v)', testPayload: "" },
      120_000,
    );
    expect(patched.skill?.secrets).toEqual([NAME]);
    expect(patched.test?.stdout).toContain(`plain: ${MARK}\n`);
    expect(patched.test?.stdout).toContain(`digest ${digest(ALICE)}`);

    const got = await bob.get("weather");
    expect(got.skill?.secrets).toEqual([NAME]);
    const exported = await alice.call(alice.raw.exportSkill, { name: "weather" });
    const files = await unpackBundle(Buffer.from(exported.archive));
    expect(files.find((f) => f.path === "SKILL.md")?.content.toString()).toMatch(/metadata:\n {2}secrets:\n {4}- WEATHER_API_KEY\n/);
    expect(leaks(JSON.stringify(got) + files.map((f) => f.content.toString("latin1")).join("\n"))).toEqual([]);
    const mirror = await readMirrorSkills<{ versions: Array<{ secrets?: string[] }> }>(engine.home);
    expect(mirror.flatMap((s) => s.versions.flatMap((v) => v.secrets ?? []))).toContain("WEATHER_API_KEY");
    expect(await leakingFiles(dirs.home)).toEqual([]);
    expect(await leakingFiles(dirs.sandboxDir)).toEqual([]);
    // The logs at debug level, every line of this suite so far.
    expect(logLines.length).toBeGreaterThan(0);
    expect(leaks(logLines.join("\n"))).toEqual([]);
  }, 240_000);

  it("an exported bundle declares the names; importing it as a folder skill tests it with the importer's values", async () => {
    const exported = await alice.call(alice.raw.exportSkill, { name: "weather" });
    // The same folder under another name (a name belongs to one skill), without the exported id.
    const files = (await unpackBundle(Buffer.from(exported.archive)))
      .filter((f) => f.path !== ".skill_id")
      .map((f) =>
        f.path === "SKILL.md"
          ? { path: f.path, content: Buffer.from(f.content.toString().replace("name: weather\n", "name: weather_folder\n")) }
          : f,
      );
    const archive = await packBundle("weather_folder", files);
    const missing = await rpcError(carol.call(carol.raw.importSkillBundle, { archive, visibility: 0, onDuplicate: 0 }));
    expect([missing.code, missing.details]).toEqual([
      status.FAILED_PRECONDITION,
      `skill weather_folder needs secret ${NAME}: set it with SetSecret`,
    ]);
    const imported = await bob.call(bob.raw.importSkillBundle, { archive, visibility: 0, onDuplicate: 0 }, 120_000);
    expect(imported.skill?.secrets).toEqual([NAME]);
    expect(imported.test?.stdout).toContain(`digest ${digest(BOB)}`);
    expect((await bob.invoke("weather_folder", "{}", 120_000)).result?.stdout).toContain(`plain: ${MARK}\n`);
    expect(leaks(JSON.stringify(imported))).toEqual([]);
  }, 240_000);

  it("a composed skill's steps get the invoker's values; a missing one refuses the run before its first step's container", async () => {
    await alice.register({ name: "echo_first", code: 'print("first")\n', visibility: Visibility.VISIBILITY_PUBLIC });
    const step = (id: string, skill: string) => ({ id, skill, args: "{}", when: "", onFailure: 0 });
    const composed = await alice.call(alice.raw.registerComposedSkill, {
      name: "weather_report",
      description: "Echoes, then reads the weather API key.",
      parametersSchema: '{"type":"object"}',
      steps: [step("first", "echo_first"), step("weather", "weather")],
      output: "",
      testPayload: "{}",
      visibility: Visibility.VISIBILITY_PUBLIC,
      exampleQueries: [],
      onDuplicate: 0,
    });
    // Its test run is the registering agent's: its steps got alice's value.
    expect(composed.test?.stdout).toContain(`digest ${digest(ALICE)}`);
    const byBob = await bob.invoke("weather_report", "{}", 120_000);
    expect(byBob.result?.stdout).toContain(`digest ${digest(BOB)}`);
    expect(leaks(JSON.stringify([composed, byBob]))).toEqual([]);
    const before = await runsByPath(engine, "invoke");
    const refused = await rpcError(carol.invoke("weather_report", "{}", 120_000));
    expect([refused.code, refused.details]).toEqual([
      status.FAILED_PRECONDITION,
      `skill weather needs secret ${NAME}: set it with SetSecret`,
    ]);
    expect(await runsByPath(engine, "invoke")).toEqual(before);
  }, 240_000);

  it("a dependent's re-test runs with its owner's values; one the owner has not set is reported, never recorded as a failure", async () => {
    const lib = (unit: string) => `def unit():\n    return "${unit}"\nif __name__ == "__main__":\n    print(unit())\n`;
    await alice.register({ name: "weather_lib", code: lib("celsius") });
    const dependent = `import hashlib, os, weather_lib
print(weather_lib.unit(), hashlib.sha256(os.environ["${NAME}"].encode()).hexdigest())
`;
    const registered = await alice.register({ name: "uses_weather", code: dependent, dependsOn: ["weather_lib"], secrets: [NAME] });
    expect(registered.test?.stdout).toBe(`celsius ${digest(ALICE)}\n`);
    // A new version of the dependency re-tests its dependents (docs/composition.md#re-tests).
    const newVersion = (unit: string) => alice.register({ name: "weather_lib", code: lib(unit) }, 120_000);
    expect((await newVersion("kelvin")).dependentsRetested).toEqual([{ name: "uses_weather", passed: true, error: "" }]);

    await alice.call(alice.raw.deleteSecret, { name: NAME });
    const retested = (await newVersion("celsius")).dependentsRetested;
    expect(retested).toEqual([
      { name: "uses_weather", passed: false, error: `skill uses_weather needs secret ${NAME}: set it with SetSecret` },
    ]);
    await setSecret(alice, ALICE);
    // Not recorded: the dependent carries no failed re-test's warning.
    const invoked = await alice.invoke("uses_weather", "{}", 120_000);
    expect([invoked.result?.stdout, invoked.warnings]).toEqual([`celsius ${digest(ALICE)}\n`, []]);
  }, 240_000);

  it("rebuild-registry from the directory brings the declaration back, and runs still get each caller's value", async () => {
    await stop();
    for (const suffix of ["", "-wal", "-shm"]) await rm(path.join(dirs.home, `registry.db${suffix}`), { force: true });
    const rebuilt = await run(process.execPath, ["--import", "tsx", "src/cli/rebuild-registry.ts"], {
      cwd: REPO_ROOT,
      env: { ...process.env, SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir },
    });
    expect(rebuilt.stdout).toContain("weather");
    await start();
    expect((await alice.get("weather")).skill?.secrets).toEqual([NAME]);
    await alice.call(alice.raw.grantSkill, { name: "weather", granteeAgent: "bob", granteeUser: "", version: 0 }).catch(() => undefined);
    expect((await invoke(alice)).result?.stdout).toContain(`digest ${digest(ALICE)}`);
    expect((await invoke(bob)).result?.stdout).toContain(`digest ${digest(BOB)}`);
    expect(await leakingFiles(dirs.home)).toEqual([]);
    expect(leaks(logLines.join("\n"))).toEqual([]);
  }, 300_000);
});
