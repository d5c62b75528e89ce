import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretStore } from "../src/secrets/index.js";
import { spawnService } from "./support/service-process.js";
import { type CliRun, skillctlAs } from "./support/skillctl.js";
import { connect, makeDirs, rpcError, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const TOKENS = { alice: "alice-secrets-token-0123", bob: "bob-secrets-token-456789", ops: "ops-secrets-token-abcdef" };
/** Values with a marker each, so a leak anywhere is found by a plain byte search. */
const ALICE_VALUE = "alice-api-key-MARKER-5d1f9e";
const BOB_VALUE = "bob-api-key-MARKER-a7c3b2";
const CLI_VALUE = "cli-api-key-MARKER-e40b6c";
const CLI_FILE_VALUE = "cli-file-key-MARKER-19f2aa";
const ALL_VALUES = [ALICE_VALUE, BOB_VALUE, CLI_VALUE, CLI_FILE_VALUE];

/** Every file under `dir` (not following links), with its bytes. */
async function filesUnder(dir: string): Promise<Array<{ file: string; bytes: Buffer }>> {
  const found: Array<{ file: string; bytes: Buffer }> = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...(await filesUnder(full)));
    else if (entry.isFile()) found.push({ file: full, bytes: await readFile(full) });
  }
  return found;
}

/** skillctl as an operator runs it, with `input` on its stdin. */
function skillctlWithInput(port: number, token: string, input: string, ...args: string[]): Promise<CliRun> {
  const cli = path.join(import.meta.dirname, "..", "src", "cli", "skillctl.ts");
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      ["--import", "tsx", cli, "--address", `127.0.0.1:${port}`, ...args],
      { env: { ...process.env, SKILLCTL_ADDRESS: "", SKILLCTL_TLS_CA: "", SKILLCTL_TOKEN: token }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
    );
    child.stdin?.end(input);
  });
}

describe("secrets through the real server: each agent's own, never a value in an answer, a log line, a metric or a file", () => {
  const lines: string[] = [];
  let engine: TestEngine;
  let alice: TestClient;
  let bob: TestClient;
  let ops: TestClient;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob},ops:admin=${TOKENS.ops}`, SKILL_ENGINE_LOG_LEVEL: "trace" },
      logs: { write: (line) => void lines.push(line) },
    });
    alice = connect(engine.app.port, TOKENS.alice);
    bob = connect(engine.app.port, TOKENS.bob);
    ops = connect(engine.app.port, TOKENS.ops);
  });
  afterAll(async () => {
    for (const client of [alice, bob, ops]) client?.close();
    await engine?.dispose();
  });

  const names = async (client: TestClient): Promise<string[]> =>
    (await client.call(client.raw.listSecrets, {})).secrets.map((secret) => secret.name);

  it("sets, lists and deletes per agent: two agents never see each other's secrets", async () => {
    const set = await alice.call(alice.raw.setSecret, { name: "API_KEY", value: ALICE_VALUE });
    expect(set.secret).toMatchObject({ name: "API_KEY", usedBy: [] });
    expect(set.secret?.createdAt).toEqual(set.secret?.updatedAt);
    await alice.call(alice.raw.setSecret, { name: "ONLY_ALICE", value: ALICE_VALUE });
    await bob.call(bob.raw.setSecret, { name: "API_KEY", value: BOB_VALUE });

    expect(await names(alice)).toEqual(["API_KEY", "ONLY_ALICE"]);
    expect(await names(bob)).toEqual(["API_KEY"]);
    expect(await names(ops)).toEqual([]); // an admin sees only its own too

    const notBobs = await rpcError(bob.call(bob.raw.deleteSecret, { name: "ONLY_ALICE" }));
    expect(notBobs.code).toBe(status.NOT_FOUND);
    expect(notBobs.details).toBe("no secret named ONLY_ALICE is set for agent bob");
    await alice.call(alice.raw.deleteSecret, { name: "ONLY_ALICE" });
    expect(await names(alice)).toEqual(["API_KEY"]);
    expect((await rpcError(alice.call(alice.raw.deleteSecret, { name: "ONLY_ALICE" }))).code).toBe(status.NOT_FOUND);

    // Replacing keeps created_at.
    const replaced = await alice.call(alice.raw.setSecret, { name: "API_KEY", value: `${ALICE_VALUE}-2` });
    expect(replaced.secret?.createdAt).toEqual(set.secret?.createdAt);
    await alice.call(alice.raw.setSecret, { name: "API_KEY", value: ALICE_VALUE });
  });

  it("answers INVALID_ARGUMENT naming the rule a name or value breaks", async () => {
    const badName = await rpcError(alice.call(alice.raw.setSecret, { name: "api-key", value: ALICE_VALUE }));
    expect(badName.code).toBe(status.INVALID_ARGUMENT);
    expect(badName.details).toContain("^[A-Z_][A-Z0-9_]{0,63}$");
    const short = await rpcError(alice.call(alice.raw.setSecret, { name: "SHORT", value: "abc" }));
    expect(short.code).toBe(status.INVALID_ARGUMENT);
    expect(short.details).toMatch(/value: is 3 bytes; a secret's value is at least 4 bytes/);
    const long = await rpcError(alice.call(alice.raw.setSecret, { name: "LONG", value: "x".repeat(64 * 1024 + 1) }));
    expect(long.details).toMatch(/at most 65536 bytes/);
  });

  it("rotates the key for admins only; every secret is still there", async () => {
    expect((await rpcError(alice.call(alice.raw.rotateSecretsKey, {}))).code).toBe(status.PERMISSION_DENIED);
    expect(await ops.call(ops.raw.rotateSecretsKey, {})).toEqual({ rotated: 2 });
    expect(await names(alice)).toEqual(["API_KEY"]);
    expect(await names(bob)).toEqual(["API_KEY"]);
  });

  it("round-trips through skillctl: the value from stdin or a file, never from the command line", async () => {
    const fromStdin = await skillctlWithInput(engine.app.port, TOKENS.alice, `${CLI_VALUE}\n`, "secrets", "set", "CLI_KEY");
    expect(fromStdin).toMatchObject({ code: 0, stdout: "secret CLI_KEY set\n" });
    const valueFile = path.join(engine.home, "..", "value.txt");
    await writeFile(valueFile, CLI_FILE_VALUE, { mode: 0o600 });
    const fromFile = await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "set", "CLI_FILE_KEY", "--value-file", valueFile);
    expect(fromFile).toMatchObject({ code: 0, stdout: "secret CLI_FILE_KEY set\n" });
    await rm(valueFile);

    const listed = await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "list");
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n")[0]).toMatch(/^NAME\s+CREATED\s+UPDATED\s+USED BY$/);
    expect(listed.stdout).toMatch(/^CLI_FILE_KEY\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+\S+ \S+\s+-$/m);
    const json = JSON.parse((await skillctlAs(engine.app.port, TOKENS.alice, "--json", "secrets", "list")).stdout) as {
      secrets: Array<{ name: string }>;
    };
    expect(json.secrets.map((s) => s.name)).toEqual(["API_KEY", "CLI_FILE_KEY", "CLI_KEY"]);
    for (const value of ALL_VALUES) expect(listed.stdout + JSON.stringify(json)).not.toContain(value);

    // A value on the command line is not taken: there is no place for it.
    const onArgv = await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "set", "ARGV_KEY", "not-taken-value");
    expect(onArgv.code).toBe(2);
    expect(onArgv.stderr).toContain("takes at most 2 argument(s)");
    const help = await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "--help");
    expect(help.stdout).toContain("never from the\n      command line, where `ps`");

    expect(await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "delete", "CLI_KEY")).toMatchObject({
      code: 0,
      stdout: "secret CLI_KEY deleted\n",
    });
    const again = await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "delete", "CLI_KEY");
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("NOT_FOUND");
    expect((await skillctlAs(engine.app.port, TOKENS.alice, "secrets", "rotate-key")).stderr).toContain("PERMISSION_DENIED");
    expect(await skillctlAs(engine.app.port, TOKENS.ops, "secrets", "rotate-key")).toMatchObject({
      code: 0,
      stdout: "re-encrypted 3 secrets under a new key\n",
    });
    expect(await names(alice)).toEqual(["API_KEY", "CLI_FILE_KEY"]);
  });

  it("never writes a value to the logs (at trace level), the metrics, or any file under SKILL_ENGINE_HOME", async () => {
    const setLines = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((l) => l.msg === "rpc" && l.method === "SetSecret");
    expect(setLines).toContainEqual(expect.objectContaining({ code: "OK", agent: "alice", secret: "API_KEY" }));
    const logs = lines.join("\n");
    const metrics = await (await fetch(`http://127.0.0.1:${engine.app.metricsPort}/metrics`)).text();
    expect(metrics).toContain('method="SetSecret"');
    const files = await filesUnder(engine.home);
    expect(files.map((f) => path.basename(f.file))).toEqual(expect.arrayContaining(["secrets.json", "secrets.key"]));
    for (const value of ALL_VALUES) {
      expect(logs).not.toContain(value);
      expect(metrics).not.toContain(value);
      for (const { file, bytes } of files) expect({ file, holds: bytes.includes(value) }).toEqual({ file, holds: false });
    }
  });

  it("keeps every secret across a restart", async () => {
    await engine.stop();
    const store = await SecretStore.open({ home: engine.home, keyFile: engine.config.secretsKeyFile });
    expect(await store.valuesFor("alice", ["API_KEY", "CLI_FILE_KEY"])).toEqual(
      new Map([
        ["API_KEY", ALICE_VALUE],
        ["CLI_FILE_KEY", CLI_FILE_VALUE],
      ]),
    );
    expect(await store.valuesFor("bob", ["API_KEY"])).toEqual(new Map([["API_KEY", BOB_VALUE]]));
    const dirs = { root: path.dirname(engine.home), home: engine.home, sandboxDir: engine.sandboxDir };
    engine = await startTestEngine({ dirs, env: { SKILL_ENGINE_TOKENS: `alice=${TOKENS.alice},bob=${TOKENS.bob}` } });
    alice.close();
    alice = connect(engine.app.port, TOKENS.alice);
    expect(await names(alice)).toEqual(["API_KEY", "CLI_FILE_KEY"]);
  });
});

describe("a key file that does not open the store stops the start", () => {
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  beforeAll(async () => {
    dirs = await makeDirs();
  });
  afterAll(async () => {
    await rm(dirs.root, { recursive: true, force: true });
  });

  const startFailure = (env: Record<string, string>): Promise<Error> =>
    spawnService({ SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir, ...env }).then(
      async (service) => {
        await service.kill();
        return new Error("expected the start to fail");
      },
      (error: unknown) => error as Error,
    );

  it("with exit code 2 and a message naming SKILL_ENGINE_SECRETS_KEY_FILE, without a stack trace; the right key starts it", async () => {
    const keyFile = path.join(dirs.root, "engine.key");
    await mkdir(dirs.home, { recursive: true, mode: 0o700 });
    const store = await SecretStore.open({ home: dirs.home, keyFile });
    await store.set("local", "API_KEY", ALICE_VALUE);
    const rightKey = await readFile(keyFile);

    const wrongKey = path.join(dirs.root, "wrong.key");
    await writeFile(wrongKey, randomBytes(32), { mode: 0o600 });
    const wrong = await startFailure({ SKILL_ENGINE_SECRETS_KEY_FILE: wrongKey });
    expect(wrong.message).toMatch(/exited with 2 before listening/);
    expect(wrong.message).toContain(
      `skill-engine: cannot start: SKILL_ENGINE_SECRETS_KEY_FILE ${wrongKey} does not open the secrets store`,
    );
    expect(wrong.message).not.toMatch(/\n\s+at /);

    await chmod(keyFile, 0o644);
    const unsafe = await startFailure({ SKILL_ENGINE_SECRETS_KEY_FILE: keyFile });
    expect(unsafe.message).toMatch(/exited with 2 before listening/);
    expect(unsafe.message).toContain(`SKILL_ENGINE_SECRETS_KEY_FILE ${keyFile}: has mode 0644`);
    // Nothing was opened or changed: no registry.db yet, the key file as it was.
    expect(await readdir(dirs.home)).toEqual(["secrets.json"]);
    expect((await readFile(keyFile)).equals(rightKey)).toBe(true);

    await chmod(keyFile, 0o600);
    const service = await spawnService({
      SKILL_ENGINE_HOME: dirs.home,
      SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir,
      SKILL_ENGINE_SECRETS_KEY_FILE: keyFile,
    });
    try {
      const client = connect(service.port);
      expect((await client.call(client.raw.listSecrets, {})).secrets.map((s) => s.name)).toEqual(["API_KEY"]);
      client.close();
    } finally {
      await service.kill("SIGTERM");
    }
  });
});
