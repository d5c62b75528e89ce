import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import Docker from "dockerode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LABEL_PURPOSE } from "../src/execution/docker/container-spec.js";
import type { InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { eventually } from "./support/poll.js";
import { containersOf, runsByPath, startTestEngine, type TestEngine } from "./support/test-engine.js";

const MiB = 1024 * 1024;

/** Files whose bytes are their index pattern, so a test can tell which bytes came back. */
const WRITES_FILES = `import json, sys
sizes = json.loads(sys.argv[1])["sizes"]
for name, size in sizes.items():
    with open("/sandbox/out/" + name, "wb") as f:
        f.write(bytes((i * 7 + len(name)) % 251 for i in range(size)))
print(json.dumps({"wrote": len(sizes)}))
`;

const pattern = (name: string, size: number): Buffer => Buffer.from(Array.from({ length: size }, (_, i) => (i * 7 + name.length) % 251));
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** The entry script's Python process in a container (docker-init is the container's first process). */
async function pythonPid(container: Docker.Container): Promise<number | undefined> {
  const top = (await container.top()) as { Titles: string[]; Processes: string[][] };
  const pid = top.Titles.indexOf("PID");
  const cmd = top.Titles.indexOf("CMD");
  const row = top.Processes.find((p) => (p[cmd] ?? "").startsWith("python3"));
  return row ? Number(row[pid]) : undefined;
}

describe("output files past the inline limits, from warm containers", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_POOL: "on",
        SKILL_ENGINE_POOL_SIZE: "1",
        SKILL_ENGINE_OUTPUT_FILE_INLINE_MB: "1",
        SKILL_ENGINE_OUTPUT_INLINE_MB: "2",
      },
    });
    const registered = await engine.client.register({ name: "writes_files", code: WRITES_FILES, testPayload: '{"sizes": {}}' });
    expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
  }, 120_000);
  afterAll(async () => {
    await engine?.dispose();
  });

  const invoke = (sizes: Record<string, number>): Promise<InvokeSkillResponse> =>
    engine.client.call(engine.client.raw.invokeSkill, {
      name: "writes_files",
      payload: JSON.stringify({ sizes }),
      payloadJson: undefined,
      routeId: "",
      files: [],
    });

  it("a warm container loads OpenSSL for the files' digests while it waits, not during the run", async () => {
    // docs/performance.md#files-in-and-out: the import is done before the job comes.
    const docker = new Docker();
    await eventually(
      "a warm container whose entry script has loaded libcrypto",
      async () => {
        for (const info of await containersOf(engine.instanceTag)) {
          if (info.Labels[LABEL_PURPOSE] !== "warm" || info.State !== "running") continue;
          const pid = await pythonPid(docker.getContainer(info.Id));
          if (pid && (await readFile(`/proc/${pid}/maps`, "utf8")).includes("libcrypto")) return true;
        }
        return undefined;
      },
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    const before = await runsByPath(engine);
    const response = await invoke({ "one.bin": 1000 });
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect((await runsByPath(engine)).warm).toBe(before.warm + 1);
    expect(response.files.map((f) => [f.path, f.sha256])).toEqual([["one.bin", sha256(pattern("one.bin", 1000))]]);
  }, 90_000);

  it("cuts files at the per-file and the total inline limits, within a read and at its edge, with whole sizes and digests", async () => {
    // Read in 1 MiB pieces: a.bin is cut at a piece's edge (1 MiB of 1.5), c.bin inside one (what is left
    // of the 2 MiB total after a.bin and b.bin: 0.5 MiB of 0.75), d.bin gets no bytes at all.
    const sizes = { "a.bin": 1.5 * MiB, "b.bin": 0.5 * MiB, "c.bin": 0.75 * MiB, "d.bin": 10 };
    const response = await invoke(sizes);
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    const inline = { "a.bin": MiB, "b.bin": 0.5 * MiB, "c.bin": 0.5 * MiB, "d.bin": 0 };
    expect(
      response.files.map((f) => ({ path: f.path, size: f.sizeBytes, inline: f.content.length, truncated: f.truncated, sha256: f.sha256 })),
    ).toEqual(
      Object.entries(sizes).map(([name, size]) => ({
        path: name,
        size,
        inline: inline[name as keyof typeof inline],
        truncated: name !== "b.bin",
        sha256: sha256(pattern(name, size)),
      })),
    );
    for (const file of response.files) expect(file.content.equals(pattern(file.path, file.content.length)), file.path).toBe(true);
    expect(response.warnings).toEqual([
      `output file a.bin is ${1.5 * MiB} bytes; its first ${MiB} came back (limits: ${MiB} bytes a file, ${2 * MiB} in all)`,
      `output file c.bin is ${0.75 * MiB} bytes; its first ${0.5 * MiB} came back (limits: ${MiB} bytes a file, ${2 * MiB} in all)`,
      `output file d.bin is 10 bytes; its first 0 came back (limits: ${MiB} bytes a file, ${2 * MiB} in all)`,
    ]);
  }, 90_000);
});
