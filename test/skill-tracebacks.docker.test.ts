import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

/**
 * docs/skill-lifecycle.md#success through the real service: a failed run's one-line cause leads with
 * the skill's own line, and the traceback the caller gets starts at the skill's own frames, never
 * at the entry script's (`File "<string>"`) or runpy's (`<frozen runpy>`).
 */
const ITEMS = `import json, sys


def count(args):
    total = 0
    for item in args["items"]:
        total += item
    return total


print(json.dumps({"total": count(json.loads(sys.argv[1]))}))
`;
const EXITS = `import json, sys
args = json.loads(sys.argv[1])
if "code" in args:
    sys.exit(args["code"])
if args.get("lookup"):
    import socket
    socket.getaddrinfo("api.example.test", 443)
print("fine")
`;
const FOLDER_RUN = `import json, sys
args = json.loads(sys.argv[1])
if args.get("fail"):
    raise ValueError("asked to fail in a folder")
print(json.dumps({"ok": True}))
`;

/** What the harness's frames looked like in a caller's stderr before they were dropped. */
const HARNESS_FRAMES = [/File "<string>"/, /<frozen runpy>/, /runpy\.py"/];

describe("a failed run's cause and traceback (real engine, real containers)", () => {
  let engine: TestEngine;
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-tracebacks-"));
    const folder = path.join(root, "skills", "folder_fails");
    await mkdir(path.join(folder, "scripts"), { recursive: true });
    await writeFile(
      path.join(folder, "SKILL.md"),
      "---\nname: folder_fails\ndescription: Fails when asked to, from a folder.\nentrypoint: scripts/run.py\ntest_payload: {}\n---\nBody.\n",
    );
    await writeFile(path.join(folder, "scripts", "run.py"), FOLDER_RUN);
    engine = await startTestEngine({ env: { SKILL_ENGINE_SKILL_DIRS: path.join(root, "skills"), SKILL_ENGINE_SKILL_WATCH: "off" } });
  }, 120_000);
  afterAll(async () => {
    await engine?.dispose();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it("a registration whose test run fails names the line of the deepest frame in the skill's own file", async () => {
    const error = await rpcError(engine.client.register({ name: "counts", code: ITEMS, testPayload: '{"things": []}' }, 120_000));
    expect(error.code).toBe(status.FAILED_PRECONDITION);
    expect(error.details).toBe("line 6: KeyError: 'items'");
  });

  it("an invocation's stderr starts at the skill's own frames; its error_summary names the line", async () => {
    await engine.client.register({ name: "counts", code: ITEMS, testPayload: '{"items": [1, 2]}' }, 120_000);
    const failed = (await engine.client.invoke("counts", '{"items": [1, "x"]}')).result;
    expect(failed).toMatchObject({
      success: false,
      exitCode: 1,
      errorSummary: "line 7: TypeError: unsupported operand type(s) for +=: 'int' and 'str'",
    });
    const stderr = failed?.stderr ?? "";
    expect(stderr.split("\n").slice(0, 2)).toEqual([
      "Traceback (most recent call last):",
      '  File "/sandbox/skill.py", line 11, in <module>',
    ]);
    expect(stderr).toContain('  File "/sandbox/skill.py", line 7, in count\n');
    for (const frame of HARNESS_FRAMES) expect(stderr).not.toMatch(frame);
  });

  it("keeps sys.exit's codes and messages as they were", async () => {
    await engine.client.register({ name: "exits", code: EXITS }, 120_000);
    expect((await engine.client.invoke("exits", '{"code": 3}')).result).toMatchObject({
      exitCode: 3,
      stderr: "",
      errorSummary: "exited with code 3",
    });
    expect((await engine.client.invoke("exits", '{"code": "bye"}')).result).toMatchObject({
      exitCode: 1,
      stderr: "bye\n",
      errorSummary: "bye",
    });
    expect((await engine.client.invoke("exits", '{"code": null}')).result).toMatchObject({ exitCode: 0, success: false });
  });

  it("keeps the no-network and no-package hints after the line", async () => {
    const offline = (await engine.client.invoke("exits", '{"lookup": true}')).result;
    expect(offline?.errorSummary).toMatch(
      /^line 7: socket\.gaierror: \[Errno -3\] Temporary failure in name resolution \(the sandbox has no network: declare the hosts the skill calls in network_allow, docs\/security\.md#egress\)$/,
    );
    const missing = await rpcError(engine.client.register({ name: "needs_yaml", code: "import json\nimport yaml\nprint(1)\n" }, 120_000));
    expect(missing.code).toBe(status.FAILED_PRECONDITION);
    expect(missing.details).toMatch(
      /^the test run failed: module "yaml" is not installed in the sandbox; declare it in requirements \(PyYAML\)/,
    );
  });

  it("a folder skill's traceback starts at its entrypoint, past the launcher", async () => {
    const scan = await engine.client.call(engine.client.raw.rescanSkillDirs, {}, 120_000);
    expect(scan.sources.find((s) => s.name === "folder_fails")?.version).toBe(1);
    const failed = (await engine.client.invoke("folder_fails", '{"fail": true}')).result;
    expect(failed?.errorSummary).toBe("line 4: ValueError: asked to fail in a folder");
    const stderr = failed?.stderr ?? "";
    expect(stderr.split("\n").slice(0, 2)).toEqual([
      "Traceback (most recent call last):",
      '  File "/sandbox/skill_dir/scripts/run.py", line 4, in <module>',
    ]);
    for (const frame of [...HARNESS_FRAMES, /File "\/sandbox\/skill\.py"/]) expect(stderr).not.toMatch(frame);
  });
});
