import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EnvironmentRebuildResult, EnvironmentStatus } from "../src/gen/skillengine/v1/environments.js";
import { eventually } from "./support/poll.js";
import { connect, makeDirs, metricSamples, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";
import { writeTokensFile } from "./support/tokens-file.js";
import { writeWheel } from "./support/wheelhouse.js";

const TOKENS = { alice: "alice-0123456789abcdef", ops: "ops-0123456789abcdef01" };

const USES_GREETING = `import json, sys
import greeting
print(json.dumps({"text": greeting.hello(json.loads(sys.argv[1]).get("name", "world"))}))
`;
/** Imports its package, then fails: the registration is refused after its environment was built. */
const FAILS_AFTER_IMPORT = `import json, sys
import farewell
raise SystemExit("no: " + farewell.bye())
`;

/**
 * The operator's side of the environments through a real server, engine and installer
 * (docs/packages.md#operators): ListEnvironments, RebuildEnvironments (admins), CheckRuntimes,
 * the build metrics and the sweep of unused environments.
 */
describe("environments for operators: list, rebuild, runtimes, metrics, removal", () => {
  let root: string;
  let wheelhouse: string;
  let greetingWheel: string;
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let env: Record<string, string>;
  let engine: TestEngine;
  let alice: TestClient;
  let ops: TestClient;

  const clients = (): void => {
    alice = connect(engine.app.port, TOKENS.alice);
    ops = connect(engine.app.port, TOKENS.ops);
  };
  const listed = async (client: TestClient = alice) => (await client.call(client.raw.listEnvironments, {})).environments;
  const metric = async (name: string, labels: Record<string, string> = {}): Promise<number> =>
    (await metricSamples(engine, name))
      .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
      .reduce((sum, sample) => sum + sample.value, 0);

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "environments-operators-"));
    wheelhouse = path.join(root, "wheels");
    greetingWheel = writeWheel(wheelhouse, {
      name: "greeting",
      version: "1.0.0",
      files: { "greeting/__init__.py": 'def hello(name):\n    return "hello, " + name\n' },
    });
    writeWheel(wheelhouse, { name: "farewell", version: "2.0", files: { "farewell/__init__.py": 'def bye():\n    return "bye"\n' } });
    dirs = await makeDirs();
    const tokensFile = await writeTokensFile(root, [
      { agent: "alice", token: TOKENS.alice },
      { agent: "ops", token: TOKENS.ops, admin: true },
    ]);
    env = { SKILL_ENGINE_WHEELHOUSE: wheelhouse, SKILL_ENGINE_TOKENS_FILE: tokensFile };
    engine = await startTestEngine({ dirs, env });
    clients();
  }, 240_000);
  afterAll(async () => {
    alice?.close();
    ops?.close();
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("lists the environment two registrations share, with its lock and both versions, built once", async () => {
    await alice.register({ name: "greets", code: USES_GREETING, requirements: ["greeting==1.0.0"] }, 300_000);
    await alice.register({ name: "greets_too", code: USES_GREETING, requirements: ["Greeting == 1.0.0"] }, 300_000);

    const environments = await listed();
    expect(environments).toHaveLength(1);
    const [environment] = environments;
    expect(environment).toMatchObject({
      requirements: ["greeting==1.0.0"],
      systemPackages: [],
      skills: 2,
      status: EnvironmentStatus.ENVIRONMENT_STATUS_READY,
      error: "",
      lock: [
        {
          kind: "wheel",
          name: "greeting",
          version: "1.0.0",
          sha256: createHash("sha256").update(readFileSync(greetingWheel)).digest("hex"),
          file: path.basename(greetingWheel),
        },
      ],
    });
    expect(environment?.id).toBe((await alice.get("greets")).skill?.environmentId);
    expect(environment?.sizeBytes).toBeGreaterThan(0);
    expect(environment?.builtAt).toBeInstanceOf(Date);

    expect(await metric("skill_engine_environment_builds_total", { result: "built" })).toBe(1);
    expect(await metric("skill_engine_environment_builds_total", { result: "failed" })).toBe(0);
    expect(await metric("skill_engine_environment_build_duration_seconds_count", { from: "declarations" })).toBe(1);
    expect(await metric("skill_engine_environment_bytes")).toBe(environment?.sizeBytes);
  });

  it("rebuilds a lost environment from its lock for an admin only, file for file", async () => {
    const [before] = await listed();
    const id = before?.id ?? "";
    expect((await rpcError(alice.call(alice.raw.rebuildEnvironments, { missingOnly: true }))).code).toBe(status.PERMISSION_DENIED);

    await rm(path.join(dirs.home, "environments", id), { recursive: true, force: true });
    expect((await listed())[0]?.status).toBe(EnvironmentStatus.ENVIRONMENT_STATUS_MISSING);

    const rebuilt = await ops.call(ops.raw.rebuildEnvironments, { missingOnly: true }, 300_000);
    expect(rebuilt.environments).toEqual([{ id, result: EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_REBUILT, error: "" }]);
    const [after] = await listed();
    expect(after).toMatchObject({ id, status: EnvironmentStatus.ENVIRONMENT_STATUS_READY, lock: before?.lock, skills: 2 });
    expect(await readdir(path.join(dirs.home, "environments", id))).toContain("lock.json");
    expect(await metric("skill_engine_environment_builds_total", { result: "built" })).toBe(2);
    expect(await metric("skill_engine_environment_build_duration_seconds_count", { from: "lock" })).toBe(1);
    expect(JSON.parse((await alice.invoke("greets", '{"name": "ada"}')).result?.stdout ?? "{}")).toEqual({ text: "hello, ada" });

    // With every directory present, missing_only leaves them as they are.
    const skipped = await ops.call(ops.raw.rebuildEnvironments, { missingOnly: true }, 300_000);
    expect(skipped.environments.map((e) => e.result)).toEqual([EnvironmentRebuildResult.ENVIRONMENT_REBUILD_RESULT_SKIPPED]);
  }, 600_000);

  it("checks the runtimes: the wheelhouse configured and readable, the sandbox's and the installer's Python", async () => {
    const report = await alice.call(alice.raw.checkRuntimes, {}, 120_000);

    expect(report.packageSource).toEqual({ kind: "wheelhouse", location: wheelhouse, reachable: true, detail: "2 wheels" });
    expect(report.sandboxPython).toMatch(/^3\.\d+\.\d+$/);
    expect(report.installerPython).toMatch(/^3\.\d+\.\d+$/);
    expect(report.pip).toMatch(/^pip \d+/);
    const minor = (version: string): string => version.split(".").slice(0, 2).join(".");
    expect(report.pythonMatches).toBe(minor(report.sandboxPython) === minor(report.installerPython));
    expect(report.debian?.available).toBe(true);
  }, 180_000);

  it("removes an environment no version refers to once its grace has passed, at the next start", async () => {
    const refused = await rpcError(
      alice.register({ name: "says_bye", code: FAILS_AFTER_IMPORT, requirements: ["farewell==2.0"] }, 300_000),
    );
    expect(refused.code).toBe(status.FAILED_PRECONDITION);
    const kept = (await listed()).find((e) => e.requirements[0] === "greeting==1.0.0");
    const orphan = (await listed()).find((e) => e.requirements[0] === "farewell==2.0");
    expect(orphan).toMatchObject({ skills: 0, status: EnvironmentStatus.ENVIRONMENT_STATUS_READY });

    alice.close();
    ops.close();
    await engine.stop();
    engine = await startTestEngine({ dirs, env: { ...env, SKILL_ENGINE_ENV_UNUSED_GRACE_HOURS: "0" } });
    clients();

    await eventually("the unused environment to be removed", async () => ((await listed()).length === 1 ? true : undefined), {
      timeoutMs: 60_000,
    });
    expect((await listed()).map((e) => e.id)).toEqual([kept?.id]);
    expect(await readdir(path.join(dirs.home, "environments"))).not.toContain(orphan?.id);
    // The start's sweep reports the bytes of what is left, before any build of this process.
    expect(await metric("skill_engine_environment_bytes")).toBe(kept?.sizeBytes);
    expect(JSON.parse((await alice.invoke("greets_too", '{"name": "bo"}')).result?.stdout ?? "{}")).toEqual({ text: "hello, bo" });
  }, 600_000);
});
