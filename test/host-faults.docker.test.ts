import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { RollbackSkillRequest, RollbackSkillResponse } from "../src/gen/skillengine/v1/lifecycle.js";
import type { PatchSkillRequest, PatchSkillResponse } from "../src/gen/skillengine/v1/registration.js";
import type { ListSkillVersionsRequest, ListSkillVersionsResponse } from "../src/gen/skillengine/v1/skills.js";
import { eventually } from "./support/poll.js";
import { type SmallDisk, mountSmallDisk } from "./support/small-disk.js";
import { containersOf, infrastructureFaults, rpcError, runsCleanedUp, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { readMirrorSkills } from "./support/registry-mirror.js";

const adder = (n: number): string => `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"sum": args.get("a", 0) + ${n}}))
`;

const sha256 = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

function patch(engine: TestEngine, request: PatchSkillRequest): Promise<PatchSkillResponse> {
  return engine.client.call(engine.client.raw.patchSkill, request);
}
function rollback(engine: TestEngine, name: string, version: number): Promise<RollbackSkillResponse> {
  return engine.client.call<RollbackSkillRequest, RollbackSkillResponse>(engine.client.raw.rollbackSkill, { name, version });
}

/**
 * The registry, the canonical file, the version history and the mirror agree about `name`, and
 * nothing half-written (a temp file) is left in the store.
 */
async function expectConsistent(engine: TestEngine, name: string): Promise<{ version: number }> {
  const store = path.join(engine.home, "memory", "acquired_skills");
  const { skill, code } = await engine.client.get(name);
  const version = skill?.version ?? 0;
  expect(sha256(code)).toBe(skill?.contentHash);
  expect(sha256(await readFile(path.join(store, `${name}.py`), "utf8"))).toBe(skill?.contentHash);
  const listed = await engine.client.call<ListSkillVersionsRequest, ListSkillVersionsResponse>(engine.client.raw.listSkillVersions, {
    name,
  });
  const history = (await readdir(path.join(store, ".versions", name))).sort();
  expect(history).toEqual(listed.versions.map((v) => `${v.version}.py`).sort());
  for (const v of listed.versions) {
    expect(sha256(await readFile(path.join(store, ".versions", name, `${v.version}.py`), "utf8"))).toBe(v.contentHash);
  }
  // The mirror catches up (it is retried until the disk takes it).
  await eventually(`the mirror to agree about ${name}`, async () => {
    const mirror = await readMirrorSkills<{ name: string; version: number; content_hash: string }>(engine.home);
    const entry = mirror.find((s) => s.name === name);
    return entry?.version === version && entry.content_hash === skill?.contentHash ? true : undefined;
  });
  const leftovers = (await readdir(store, { recursive: true })).filter((entry) => path.basename(entry).startsWith(".tmp-"));
  expect(leftovers).toEqual([]);
  return { version };
}

describe("a full disk under SKILL_ENGINE_HOME", () => {
  let root: string;
  let disk: SmallDisk;
  let engine: TestEngine;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-full-home-"));
    disk = await mountSmallDisk(path.join(root, "home"), 48);
    engine = await startTestEngine({ dirs: { root, home: disk.dir, sandboxDir: path.join(root, "sandbox") } });
  }, 60_000);
  afterAll(async () => {
    await engine?.stop();
    await disk?.unmount();
    await rm(root, { recursive: true, force: true });
  });

  it("refuses register, patch and rollback clearly, half-writes nothing, keeps serving reads and invocations, and writes again once freed", async () => {
    await engine.client.register({ name: "adder", code: adder(1) });
    await engine.client.register({ name: "adder", code: adder(2) });
    expect((await expectConsistent(engine, "adder")).version).toBe(2);

    await disk.fill();
    const refusals = [
      await rpcError(engine.client.register({ name: "newcomer", code: adder(7) })),
      await rpcError(engine.client.register({ name: "adder", code: adder(3) })),
      await rpcError(patch(engine, { name: "adder", find: "+ 2", replace: "+ 4", testPayload: "" })),
      await rpcError(rollback(engine, "adder", 1)),
    ];
    for (const refused of refusals) {
      expect(refused.code, refused.details).toBe(status.RESOURCE_EXHAUSTED);
      expect(refused.details).toMatch(/disk .*is full.*free space and retry/);
    }
    expect((await rpcError(engine.client.get("newcomer"))).code).toBe(status.NOT_FOUND);
    expect((await expectConsistent(engine, "adder")).version).toBe(2);

    // Reads and invocations keep working.
    expect((await engine.client.list()).skills.map((s) => s.name)).toEqual(["adder"]);
    const invoked = await engine.client.invoke("adder", '{"a": 40}');
    expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ sum: 42 });

    // Space again: every write works and everything still agrees.
    await disk.free();
    await engine.client.register({ name: "newcomer", code: adder(7) });
    await patch(engine, { name: "adder", find: "+ 2", replace: "+ 4", testPayload: "" });
    expect((await expectConsistent(engine, "adder")).version).toBe(3);
    await rollback(engine, "adder", 1);
    expect((await expectConsistent(engine, "adder")).version).toBe(1);
    await expectConsistent(engine, "newcomer");
  }, 120_000);
});

describe("a full disk under the sandbox directory", () => {
  let root: string;
  let disk: SmallDisk;
  let engine: TestEngine;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-full-sandbox-"));
    disk = await mountSmallDisk(path.join(root, "sandbox"), 4);
    engine = await startTestEngine({ dirs: { root, home: path.join(root, "home"), sandboxDir: disk.dir } });
  }, 60_000);
  afterAll(async () => {
    await engine?.stop();
    await disk?.unmount();
    await rm(root, { recursive: true, force: true });
  });

  it("fails runs as an infrastructure fault, blames no skill, and runs again once freed", async () => {
    await engine.client.register({ name: "adder", code: adder(1) });
    await engine.client.invoke("adder", '{"a": 1}');
    const before = (await engine.client.get("adder")).skill;
    // The finished runs' directories go in the background; gone before the disk fills, they free no room later.
    await runsCleanedUp(engine);

    await disk.fill();
    for (let i = 0; i < 4; i++) {
      const refused = await rpcError(engine.client.invoke("adder", '{"a": 1}'));
      expect(refused.code, refused.details).toBe(status.UNAVAILABLE);
      expect(refused.details).toContain("SKILL_ENGINE_SANDBOX_DIR");
    }
    // A registration's test run hits the same wall: UNAVAILABLE, not the skill's FAILED_PRECONDITION.
    expect((await rpcError(engine.client.register({ name: "other", code: adder(5) }))).code).toBe(status.UNAVAILABLE);
    const after = (await engine.client.get("adder")).skill;
    expect({ usage: after?.usageCount, failures: after?.failureCount, status: after?.status }).toEqual({
      usage: before?.usageCount,
      failures: before?.failureCount,
      status: before?.status,
    });
    expect((await infrastructureFaults(engine))["host-disk-full"]).toBeGreaterThanOrEqual(5);
    // Finished runs' containers are removed in the background (docs/performance.md#container-removal).
    await eventually("no container left", async () => ((await containersOf(engine.instanceTag)).length === 0 ? true : undefined));

    await disk.free();
    const invoked = await engine.client.invoke("adder", '{"a": 41}');
    expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ sum: 42 });
    await eventually("no run directory left", async () => ((await readdir(path.join(disk.dir, "runs"))).length === 0 ? true : undefined));
  }, 120_000);
});

describe("the registry database locked by another process, the store read-only", () => {
  let root: string;
  let disk: SmallDisk;
  let engine: TestEngine;
  let holder: ChildProcessWithoutNullStreams | undefined;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-locked-"));
    disk = await mountSmallDisk(path.join(root, "home"), 48);
    engine = await startTestEngine({ dirs: { root, home: disk.dir, sandboxDir: path.join(root, "sandbox") } });
    await engine.client.register({ name: "adder", code: adder(1) });
  }, 60_000);
  afterEach(() => {
    holder?.kill("SIGKILL");
    holder = undefined;
  });
  afterAll(async () => {
    await engine?.stop();
    await disk?.unmount();
    await rm(root, { recursive: true, force: true });
  });

  it("answers UNAVAILABLE while another process holds the write lock, and writes once it lets go", async () => {
    // The sqlite3 shell takes the write lock and says so; it lets go when told to commit. The service may
    // be writing at that moment (the routing rows and the mirror of the registration before are written
    // after its reply): the shell waits for the lock (.timeout) instead of failing BEGIN and printing the
    // marker anyway, which let the registration below through. Anything on its stderr fails the test.
    holder = spawn("sqlite3", ["-bail", path.join(engine.home, "registry.db")]);
    const locked = new Promise<void>((resolve, reject) => {
      holder?.stdout.on("data", (chunk: Buffer) => {
        if (chunk.toString().includes("locked")) resolve();
      });
      holder?.stderr.on("data", (chunk: Buffer) => reject(new Error(`sqlite3 could not take the lock: ${chunk.toString()}`)));
    });
    holder.stdin.write(".timeout 60000\nBEGIN EXCLUSIVE;\nSELECT 'locked';\n");
    await locked;

    const refused = await rpcError(engine.client.register({ name: "adder", code: adder(2) }));
    expect(refused.code, refused.details).toBe(status.UNAVAILABLE);
    expect(refused.details).toMatch(/registry is busy.*retry/);
    // Reads and invocations go on.
    expect((await engine.client.get("adder")).skill?.version).toBe(1);
    expect(JSON.parse((await engine.client.invoke("adder", '{"a": 1}')).result?.stdout ?? "")).toEqual({ sum: 2 });
    expect((await expectConsistent(engine, "adder")).version).toBe(1);

    holder.stdin.end("COMMIT;\n");
    await new Promise((resolve) => holder?.once("exit", resolve));
    await engine.client.register({ name: "adder", code: adder(2) });
    expect((await expectConsistent(engine, "adder")).version).toBe(2);
  }, 120_000);

  it("answers UNAVAILABLE while the canonical store's file system is read-only, and writes once it is writable again", async () => {
    // A version of known content, whatever ran before: the invocation below must be served by it.
    await engine.client.register({ name: "adder", code: adder(5) });
    const { version } = await expectConsistent(engine, "adder");
    const storeDir = path.join("memory", "acquired_skills");
    disk.readOnly(storeDir, true);
    try {
      const refused = await rpcError(engine.client.register({ name: "adder", code: adder(3) }));
      expect(refused.code, refused.details).toBe(status.UNAVAILABLE);
      expect(refused.details).toMatch(/cannot be written.*read-only/);
      expect((await engine.client.get("adder")).skill?.version).toBe(version);
      expect(JSON.parse((await engine.client.invoke("adder", '{"a": 1}')).result?.stdout ?? "")).toEqual({ sum: 6 });
      expect((await expectConsistent(engine, "adder")).version).toBe(version);
    } finally {
      disk.readOnly(storeDir, false);
    }
    await engine.client.register({ name: "adder", code: adder(3) });
    expect((await expectConsistent(engine, "adder")).version).toBe(version + 1);
  }, 120_000);
});
