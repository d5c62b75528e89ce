import { execFile, spawnSync } from "node:child_process";
import { cp, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSigned } from "./support/self-signed.js";
import { connect, startTestEngine, type TestClient, type TestEngine } from "./support/test-engine.js";

const ROOT = path.resolve(import.meta.dirname, "..");
/** Debian's Python, whose grpcio 1.51 and protobuf 4.21 the client must run on. */
const PYTHON = "/usr/bin/python3";
const TOKEN = "alice-token-5f0c9d2e8a7b4c61";
/** Ceiling of each Python process: a venv, a pip build or a run of the checks on a loaded machine. */
const PROCESS_CEILING_MS = 300_000;

/**
 * What is missing for the test, or undefined. The test installs nothing itself:
 * scripts/ensure-test-tools.sh (before npm test) installs these Debian packages.
 */
function missingPythonPackages(): string | undefined {
  const probe = spawnSync(PYTHON, ["-c", "import ensurepip, wheel, grpc, google.protobuf"], { encoding: "utf8", timeout: 60_000 });
  if (probe.status === 0) return undefined;
  const cause = (probe.stderr || probe.error?.message || "").trim().split("\n").pop();
  return `Debian's python3-venv, python3-wheel, python3-grpcio and python3-protobuf are needed (${cause}): scripts/ensure-test-tools.sh installs them`;
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A process with no Python settings of the test's own environment leaking in (user site, PYTHONPATH, pip's index). */
function run(command: string, args: string[], cwd: string): Promise<Run> {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    PYTHONNOUSERSITE: "1",
    PYTHONDONTWRITEBYTECODE: "1",
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    PIP_NO_INPUT: "1",
  };
  return new Promise((resolve) => {
    execFile(command, args, { cwd, env, timeout: PROCESS_CEILING_MS, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
    );
  });
}

const missing = missingPythonPackages();

describe.skipIf(missing !== undefined)(
  `the Python client (clients/python), installed offline, against the real service${missing ? ` — skipped: ${missing}` : ""}`,
  () => {
    let engine: TestEngine;
    let client: TestClient;
    let work: string;
    let venvPython: string;
    let address: string;

    beforeAll(
      async () => {
        engine = await startTestEngine({ env: { SKILL_ENGINE_TOKENS: `alice=${TOKEN}` } });
        client = connect(engine.app.port, TOKEN);
        address = `127.0.0.1:${engine.app.port}`;
        work = await mkdtemp(path.join(os.tmpdir(), "python-client-"));
        // setuptools builds inside the folder it installs from (build/, *.egg-info): a copy keeps the
        // checkout untouched and lets two runs install at once.
        await cp(path.join(ROOT, "clients", "python"), path.join(work, "client"), {
          recursive: true,
          filter: (source) => !/(__pycache__|\.egg-info|[/\\]build)$/.test(source),
        });
        const venv = path.join(work, "venv");
        // --system-site-packages: Debian's grpcio and protobuf, offline; nothing comes from an index.
        const created = await run(PYTHON, ["-m", "venv", "--system-site-packages", venv], work);
        expect(created, created.stderr).toMatchObject({ code: 0 });
        venvPython = path.join(venv, "bin", "python");
        const installed = await run(
          venvPython,
          ["-m", "pip", "install", "--no-index", "--no-build-isolation", path.join(work, "client")],
          work,
        );
        expect(installed, installed.stdout + installed.stderr).toMatchObject({ code: 0 });
        expect(installed.stdout).toContain("Successfully installed skill-engine-client-0.1.0");
      },
      2 * PROCESS_CEILING_MS + 60_000,
    );

    afterAll(async () => {
      client?.close();
      await engine?.dispose();
      if (work) await rm(work, { recursive: true, force: true });
    });

    it(
      "registers, invokes with files, routes, renders tools in both formats, records outcomes, follows list pages and maps errors to exceptions",
      async () => {
        // test/python/client_check.py asserts each step and prints "ok: …"; run from the temp dir so
        // that only the installed copy of the client can be imported.
        const check = await run(venvPython, [path.join(ROOT, "test", "python", "client_check.py"), address, TOKEN], work);
        expect(check, check.stdout + check.stderr).toMatchObject({ code: 0 });
        expect(check.stdout).toContain(`client: ${path.join(work, "venv", "lib")}`);
        expect(check.stdout.match(/^ok: .*$/gm)).toEqual([
          "ok: the token goes as authorization: Bearer",
          "ok: register",
          "ok: invoke",
          "ok: an identical registration is unchanged",
          "ok: JSON as structures",
          "ok: files in and out",
          "ok: a failed run is in-band",
          "ok: errors map to their classes",
          "ok: route",
          "ok: route_as_tools",
          "ok: record_outcome",
          "ok: list helpers follow pages",
        ]);
        expect(check.stdout).toMatch(/all checks passed\n$/);

        // The service saw the client's calls as alice's.
        const added = await client.get("py_add");
        expect(added.skill).toMatchObject({ name: "py_add", owner: "alice" });
        expect(added.skill?.usageCount).toBeGreaterThanOrEqual(3);
      },
      PROCESS_CEILING_MS + 60_000,
    );

    it(
      "runs the example agent loop: routes, hands OpenAI tools to a stub model, invokes its choice and records the outcome",
      async () => {
        const loop = path.join(ROOT, "examples", "agent_loop.py");
        const first = await run(venvPython, [loop, "--address", address, "--token", TOKEN], work);
        expect(first, first.stdout + first.stderr).toMatchObject({ code: 0, stderr: "" });
        expect(first.stdout).toMatch(/^registered: count_words v1 \(test run printed \{"words": 3\}\)$/m);
        expect(first.stdout).toMatch(/^routed: count_words(, |$)/m);
        expect(first.stdout).toContain('model called: count_words {"text": "the quick brown fox jumps over the lazy dog"}\n');
        expect(first.stdout).toContain('result: success, {"words": 9}\n');
        expect(first.stdout).toContain('answer: The tool answered: {"words": 9}\n');
        expect(first.stdout).toMatch(/^outcome recorded: success \(skill status: active\)$/m);

        // Again, with another request: the demo skills exist now, and the route leads to the other one.
        const request = "What is 21.5 degrees Celsius in Fahrenheit?";
        const second = await run(venvPython, [loop, "--address", address, "--token", TOKEN, "--request", request], work);
        expect(second, second.stdout + second.stderr).toMatchObject({ code: 0, stderr: "" });
        expect(second.stdout).not.toContain("registered:");
        expect(second.stdout).toContain('model called: celsius_to_fahrenheit {"celsius": 21.5}\n');
        expect(second.stdout).toContain('result: success, {"fahrenheit": 70.7}\n');

        const counted = await client.get("count_words");
        expect(counted.skill).toMatchObject({ version: 1, owner: "alice" });
        expect(counted.skill?.usageCount).toBeGreaterThanOrEqual(1);

        // Without the token the service refuses, and the loop says so on stderr with the code.
        const refused = await run(venvPython, [loop, "--address", address], work);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(/^agent_loop: UNAUTHENTICATED: /);
      },
      3 * PROCESS_CEILING_MS,
    );

    it(
      "speaks TLS with the server's CA given as a path or as PEM bytes; plaintext to a TLS port is UNAVAILABLE",
      async () => {
        const { certFile, keyFile } = await selfSigned(work, "engine");
        const tlsEngine = await startTestEngine({ env: { SKILL_ENGINE_TLS_CERT: certFile, SKILL_ENGINE_TLS_KEY: keyFile } });
        try {
          const script = [
            "import sys",
            "from skill_engine import SkillEngine, UnavailableError",
            "from skill_engine.gen.skillengine.v1.operations_pb2 import WhoAmIRequest",
            "address, ca = sys.argv[1], sys.argv[2]",
            "for tls in (ca, open(ca, 'rb').read()):",
            "    print(SkillEngine(address, tls=tls, timeout=60).call('WhoAmI', WhoAmIRequest()).agent_id)",
            "try:",
            "    SkillEngine(address, timeout=60).call('WhoAmI', WhoAmIRequest())",
            "except UnavailableError as error:",
            "    print(error.code_name)",
          ].join("\n");
          const tls = await run(venvPython, ["-c", script, `localhost:${tlsEngine.app.port}`, certFile], work);
          expect(tls, tls.stderr).toMatchObject({ code: 0, stdout: "local\nlocal\nUNAVAILABLE\n" });
        } finally {
          await tlsEngine.dispose();
        }
      },
      PROCESS_CEILING_MS + 60_000,
    );
  },
);
