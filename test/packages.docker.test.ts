import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeDirs, rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { writeAptRepository, writeWheel } from "./support/wheelhouse.js";

/**
 * Skills that need packages, through a real server, the real engine and real installs
 * (docs/packages.md): a wheel and a Debian package the test makes itself, nothing from outside
 * the machine.
 */
const USES_GREETING = `import json, sys
import greeting
args = json.loads(sys.argv[1])
print(json.dumps({"text": greeting.hello(args.get("name", "world"))}))
`;
const USES_DEB = `import json, sys
import sedeb
print(json.dumps({"value": sedeb.VALUE}))
`;
const WRITES_ENV = `import json, sys, os
import greeting
target = os.path.join(os.path.dirname(greeting.__file__), "planted.txt")
try:
    open(target, "w").write("x")
    print(json.dumps({"wrote": True}))
except OSError as error:
    print(json.dumps({"wrote": False, "error": type(error).__name__}))
`;

describe("skills with packages through a real server, engine and installer", () => {
  let root: string;
  let engine: TestEngine;
  let dirs: Awaited<ReturnType<typeof makeDirs>>;
  let env: Record<string, string>;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "packages-e2e-"));
    const wheelhouse = path.join(root, "wheels");
    // A package that tries to reach the network when imported: the sandbox still has none. The
    // address is TEST-NET-1 (never routed); without an interface the attempt fails before any packet.
    writeWheel(wheelhouse, {
      name: "phonehome",
      version: "1.0.0",
      files: {
        "phonehome/__init__.py":
          'import socket\ntry:\n    socket.create_connection(("192.0.2.1", 80), timeout=2)\n    REACHED = True\nexcept OSError as error:\n    REACHED = False\n    ERROR = type(error).__name__\n',
      },
    });
    writeWheel(wheelhouse, {
      name: "greeting",
      version: "1.0.0",
      files: { "greeting/__init__.py": 'def hello(name):\n    return "hello, " + name\n' },
    });
    const sources = writeAptRepository(path.join(root, "apt"), {
      name: "python3-sedeb",
      version: "1.0",
      module: "sedeb",
      value: "from a deb",
    });
    env = { SKILL_ENGINE_WHEELHOUSE: wheelhouse, SKILL_ENGINE_APT_SOURCES: sources };
    dirs = await makeDirs();
    engine = await startTestEngine({ dirs, env });
  }, 240_000);
  afterAll(async () => {
    await engine?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  const environmentsOnDisk = async (): Promise<string[]> =>
    (await readdir(path.join(dirs.home, "environments")).catch(() => [] as string[])).filter((name) => /^[0-9a-f]{32}$/.test(name));

  it("registers and invokes a skill whose wheel is declared, and shares its environment with a second skill of the same set", async () => {
    const first = await engine.client.register(
      { name: "greets", code: USES_GREETING, testPayload: '{"name": "ada"}', requirements: ["greeting==1.0.0"] },
      300_000,
    );
    expect(first.skill?.requirements).toEqual(["greeting==1.0.0"]);
    expect(first.skill?.environmentId).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.parse((await engine.client.invoke("greets", '{"name": "bob"}')).result?.stdout ?? "{}")).toEqual({ text: "hello, bob" });
    const second = await engine.client.register(
      { name: "greets_too", code: USES_GREETING, testPayload: "{}", requirements: ["Greeting == 1.0.0"] },
      300_000,
    );
    expect(second.skill?.environmentId).toBe(first.skill?.environmentId);
    expect(await environmentsOnDisk()).toEqual([first.skill?.environmentId]);
  });

  it("runs a skill whose Debian package is declared", async () => {
    const registered = await engine.client.register(
      { name: "uses_deb", code: USES_DEB, testPayload: "{}", systemPackages: ["python3-sedeb"] },
      300_000,
    );
    expect(registered.skill?.systemPackages).toEqual(["python3-sedeb"]);
    expect(JSON.parse((await engine.client.invoke("uses_deb", "{}")).result?.stdout ?? "{}")).toEqual({ value: "from a deb" });
  });

  it("mounts the environment read-only: a skill cannot write into it", async () => {
    await engine.client.register({ name: "writes_env", code: WRITES_ENV, testPayload: "{}", requirements: ["greeting==1.0.0"] }, 300_000);
    const out = JSON.parse((await engine.client.invoke("writes_env", "{}")).result?.stdout ?? "{}") as { wrote: boolean; error?: string };
    expect(out).toEqual({ wrote: false, error: "OSError" });
  });

  it("gives an installed package no network: its import-time connection fails", async () => {
    const code = 'import json\nimport phonehome\nprint(json.dumps({"reached": phonehome.REACHED}))\n';
    await engine.client.register({ name: "phones_home", code, testPayload: "{}", requirements: ["phonehome==1.0.0"] }, 300_000);
    expect(JSON.parse((await engine.client.invoke("phones_home", "{}")).result?.stdout ?? "{}")).toEqual({ reached: false });
  });

  it("refuses a requirement no source has, registering nothing", async () => {
    const error = await rpcError(
      engine.client.register(
        { name: "needs_missing", code: USES_GREETING, testPayload: "{}", requirements: ["nosuchpackage==9.9"] },
        300_000,
      ),
    );
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(error.details).toMatch(/nosuchpackage/);
    expect((await rpcError(engine.client.get("needs_missing"))).code).toBe(status.NOT_FOUND);
  });

  it("refuses a requirement that is an installer option, naming the field", async () => {
    const error = await rpcError(
      engine.client.register({ name: "sneaky", code: USES_GREETING, testPayload: "{}", requirements: ["--index-url=http://127.0.0.1:9/"] }),
    );
    expect(error.code).toBe(status.INVALID_ARGUMENT);
    expect(error.details).toMatch(/requirements\[0\]/);
  });

  it("keeps working after a sandbox wipe, a restart, and the loss of the environments' directories (rebuilt from their locks)", async () => {
    await engine.client.call(engine.client.raw.wipeSandbox, {});
    expect(JSON.parse((await engine.client.invoke("greets", '{"name": "cy"}')).result?.stdout ?? "{}")).toEqual({ text: "hello, cy" });
    await engine.stop();
    await rm(path.join(dirs.home, "environments"), { recursive: true, force: true });
    engine = await startTestEngine({ dirs, env });
    expect(JSON.parse((await engine.client.invoke("greets", '{"name": "di"}', 300_000)).result?.stdout ?? "{}")).toEqual({
      text: "hello, di",
    });
    expect(JSON.parse((await engine.client.invoke("uses_deb", "{}", 300_000)).result?.stdout ?? "{}")).toEqual({ value: "from a deb" });
  }, 600_000);
});
