import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { credentials, loadPackageDefinition, status } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionResult } from "../src/gen/skillengine/v1/execution.js";
import { LABEL_SKILL } from "../src/execution/index.js";
import { containersOf, docker, rpcError, runsCleanedUp, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { entriesUnder, processesNamed } from "./support/host-probes.js";

/**
 * Resource limits of the sandbox, exercised end to end: a real server, real containers, and
 * skills that misbehave on purpose. Every hostile skill behaves on its registration payload
 * ({"mode": "ok"}) and misbehaves when invoked with its attack payload, so the failure shows
 * up as an in-band ExecutionResult of InvokeSkill.
 */

const TIMEOUT_MS = 2_000;
const MEMORY_MB = 64;
const PIDS_LIMIT = 32;
const OUTPUT_LIMIT = 64 * 1024;
// The file-size limit is well below the tmpfs size, so one file hits EFBIG in /tmp before the tmpfs
// fills; and the tmpfs is well below the memory limit, since its pages count against it.
const TMPFS_MB = 16;
const MAX_FILE_MB = 4;

const OK_PAYLOAD = '{"mode": "ok"}';

/** A skill that prints `{"ok": true}` unless args["mode"] selects one of the given branches. */
function hostileSkill(branches: string): string {
  return `import json, os, sys
args = json.loads(sys.argv[1])
mode = args.get("mode")
${branches}
print(json.dumps({"ok": True, "mode": mode}))
`;
}

/** Processes on this host whose command line contains `marker` (sandboxes share our kernel). */
async function processesWith(marker: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = await readFile(path.join("/proc", entry, "cmdline"), "utf8");
      if (cmdline.includes(marker)) found.push(Number(entry));
    } catch {
      // The process exited while we looked.
    }
  }
  return found;
}

/**
 * Python: `hold(tag)` names the process `tag` (its /proc/<pid>/comm, visible on the host) and waits
 * for SIGUSR1, so the host can look around while the skill's container is still running.
 */
const HOLD_PY = `def hold(tag):
    import ctypes, signal
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    ctypes.CDLL(None).prctl(15, tag.encode(), 0, 0, 0)  # PR_SET_NAME
    signal.sigwait({signal.SIGUSR1})`;

/** grpc.health.v1 status of the whole server, through a client built from the health proto. */
async function healthStatus(port: number): Promise<string> {
  const definition = loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String }));
  const Health = (definition as any).grpc.health.v1.Health;
  const client = new Health(`127.0.0.1:${port}`, credentials.createInsecure());
  try {
    return await new Promise<string>((resolve, reject) => {
      client.check({ service: "" }, { deadline: Date.now() + 10_000 }, (error: Error | null, response: { status: string }) =>
        error ? reject(error) : resolve(response.status),
      );
    });
  } finally {
    client.close();
  }
}

describe("sandbox resource limits through a real server and real containers", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine({
      env: {
        SKILL_ENGINE_TIMEOUT_MS: String(TIMEOUT_MS),
        SKILL_ENGINE_MEMORY_MB: String(MEMORY_MB),
        SKILL_ENGINE_PIDS_LIMIT: String(PIDS_LIMIT),
        SKILL_ENGINE_OUTPUT_LIMIT_BYTES: String(OUTPUT_LIMIT),
        SKILL_ENGINE_TMPFS_MB: String(TMPFS_MB),
        SKILL_ENGINE_MAX_FILE_MB: String(MAX_FILE_MB),
        // Fork bombs and friends trip the content guard; the limits must hold without it.
        SKILL_ENGINE_CONTENT_GUARD: "warn",
      },
    });
    const good = await engine.client.register({
      name: "good_echo",
      code: "import json, sys\nprint(json.dumps({'echo': json.loads(sys.argv[1])}))\n",
      testPayload: '{"n": 0}',
    });
    expect(good.test?.success).toBe(true);
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  /** The service still answers, still runs containers, and nothing of the last run is left. */
  async function expectHealthyAndClean(): Promise<void> {
    await runsCleanedUp(engine);
    const n = Math.floor(Math.random() * 1000);
    const { result } = await engine.client.invoke("good_echo", JSON.stringify({ n }));
    expect(result).toMatchObject({ success: true, exitCode: 0, stdout: `{"echo": {"n": ${n}}}\n`, errorSummary: "" });
    expect(await healthStatus(engine.app.port)).toBe("SERVING");
  }

  async function invokeHostile(name: string, payload: unknown): Promise<ExecutionResult> {
    const { result } = await engine.client.invoke(name, JSON.stringify(payload));
    if (!result) throw new Error("InvokeSkill returned no result");
    if (process.env.SANDBOX_TEST_VERBOSE) {
      const { stdout, stderr, ...flags } = result;
      console.log(name, JSON.stringify(payload), JSON.stringify({ ...flags, stdout: stdout.slice(0, 200), stderr: stderr.slice(-300) }));
    }
    return result;
  }

  /**
   * Invokes a skill that ends in `hold(payload.tag)` and runs `whileHeld` on the host while the
   * skill waits there with its container running; then SIGUSR1 (forwarded to the skill by the
   * container's init) lets it finish. No clock: the host waits for the process to take its name.
   */
  async function invokeHolding(name: string, payload: Record<string, unknown>, whileHeld: () => Promise<void>): Promise<ExecutionResult> {
    const tag = `held-${randomUUID().slice(0, 8)}`;
    let settled = false;
    const call = invokeHostile(name, { ...payload, tag });
    call.then(
      () => (settled = true),
      () => (settled = true),
    );
    try {
      while (!settled && (await processesNamed(tag)).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      if (settled) throw new Error(`${name} finished without holding: ${JSON.stringify(await call)}`);
      await whileHeld();
    } finally {
      for (const info of await containersOf(engine.instanceTag)) {
        if (info.Labels[LABEL_SKILL] !== name) continue;
        await docker
          .getContainer(info.Id)
          .kill({ signal: "SIGUSR1" })
          .catch(() => undefined); // already gone
      }
    }
    return call;
  }

  it("runs the skill under the CPU quota, the open-files limit and with swap off, as the skill itself sees them", async () => {
    // cgroup v1 (this project's machines) or v2: whichever the container has.
    const LOOK = `import json, os, resource
def read(path):
    return open(path).read().strip() if os.path.exists(path) else None
print(json.dumps({
    "nofile": resource.getrlimit(resource.RLIMIT_NOFILE),
    "cpu_v1": [read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), read("/sys/fs/cgroup/cpu/cpu.cfs_period_us")],
    "cpu_v2": read("/sys/fs/cgroup/cpu.max"),
    "memory_v1": [read("/sys/fs/cgroup/memory/memory.limit_in_bytes"), read("/sys/fs/cgroup/memory/memory.memsw.limit_in_bytes")],
    "swap_v2": read("/sys/fs/cgroup/memory.swap.max"),
}))
`;
    // An engine of its own, so that the other limits' tests keep the default CPU quota.
    const halfCpu = await startTestEngine({ env: { SKILL_ENGINE_CPUS: "0.5", SKILL_ENGINE_MEMORY_MB: String(MEMORY_MB) } });
    let stdout: string | undefined;
    try {
      await halfCpu.client.register({ name: "looks_around", code: LOOK });
      stdout = (await halfCpu.client.invoke("looks_around")).result?.stdout ?? "{}";
    } finally {
      await halfCpu.dispose();
    }
    const seen = JSON.parse(stdout ?? "{}") as {
      nofile: [number, number];
      cpu_v1: [string | null, string | null];
      cpu_v2: string | null;
      memory_v1: [string | null, string | null];
      swap_v2: string | null;
    };
    expect(seen.nofile).toEqual([256, 256]);
    const [quota, period] = seen.cpu_v2 === null ? seen.cpu_v1.map(Number) : (seen.cpu_v2.split(" ").map(Number) as [number, number]);
    expect((quota as number) / (period as number)).toBe(0.5);
    const memoryBytes = String(MEMORY_MB * 1024 * 1024);
    if (seen.cpu_v2 === null) expect(seen.memory_v1).toEqual([memoryBytes, memoryBytes]);
    else expect(seen.swap_v2).toBe("0");
  });

  it("rejects a skill that prints nothing (or only whitespace) at registration, persisting nothing, and says what a skill must do", async () => {
    for (const [name, code] of [
      ["silent_skill", "import sys\nx = 1\n"],
      ["blank_skill", "print('   ')\nprint()\n"],
      // A newcomer's first skill is often shaped like a function that nothing calls.
      ["function_shaped", "def run(a, b):\n    return a + b\n"],
    ] as const) {
      const error = await rpcError(engine.client.register({ name, code }));
      expect(error.code).toBe(status.FAILED_PRECONDITION);
      expect(error.details).toBe(
        "exited 0 but printed nothing: print the result to stdout (a skill receives its payload as JSON in sys.argv[1]; see docs/skill-lifecycle.md#the-skill-contract)",
      );
      expect((await rpcError(engine.client.get(name))).code).toBe(status.NOT_FOUND);
    }
    await expectHealthyAndClean();
  });

  it("kills a skill that loops forever at the wall-time limit: timedOut, one-line summary", async () => {
    // Directly at registration: the TDD gate reports the timeout as the cause.
    const rejected = await rpcError(engine.client.register({ name: "spin_at_register", code: "while True:\n    pass\n" }));
    expect(rejected.code).toBe(status.FAILED_PRECONDITION);
    expect(rejected.details).toBe(`timed out after ${TIMEOUT_MS} ms`);

    // At invocation: a skill that passed its gate but spins on another payload (printing first,
    // so the partial output is kept and the run is still a failure).
    await engine.client.register({
      name: "spin",
      code: hostileSkill(`if mode == "spin":
    print("started", flush=True)
    while True:
        pass`),
      testPayload: OK_PAYLOAD,
    });
    const result = await invokeHostile("spin", { mode: "spin" });
    expect(result).toMatchObject({
      timedOut: true,
      oomKilled: false,
      success: false,
      exitCode: 137,
      stdout: "started\n",
      errorSummary: `timed out after ${TIMEOUT_MS} ms`,
    });

    // usage_count counts successful invocations; failure_count consecutive failures.
    const got = await engine.client.get("spin");
    expect(got.skill).toMatchObject({ usageCount: 0, failureCount: 1 });
    expect(got.skill?.lastInvokedAt).toBeInstanceOf(Date);
    await expectHealthyAndClean();
  });

  it("reports a skill that allocates far past the memory limit as oomKilled (kernel OOM kill, not MemoryError)", async () => {
    await engine.client.register({
      name: "memory_hog",
      code: hostileSkill(`if mode == "one_block":
    # One 1 GiB bytes object: malloc'd lazily, then every page is written by the fill.
    block = b"x" * (1 << 30)
    print(len(block))
if mode == "many_blocks":
    blocks = []
    while True:
        chunk = bytearray(1 << 20)
        for i in range(0, len(chunk), 4096):
            chunk[i] = 1
        blocks.append(chunk)`),
      testPayload: OK_PAYLOAD,
    });
    for (const mode of ["one_block", "many_blocks"]) {
      const result = await invokeHostile("memory_hog", { mode });
      expect(result, mode).toMatchObject({
        oomKilled: true,
        timedOut: false,
        success: false,
        exitCode: 137,
        stdout: "",
        errorSummary: `killed: out of memory (limit ${MEMORY_MB} MiB)`,
      });
      // The kernel killed it: Python never got to raise MemoryError.
      expect(result.stderr, mode).not.toContain("MemoryError");
    }
    await expectHealthyAndClean();
  });

  it("keeps a run whose child was OOM-killed a success when the skill itself exits 0 with output (oomKilled still set)", async () => {
    await engine.client.register({
      name: "child_hog",
      code: hostileSkill(`import subprocess
if mode == "child_oom":
    # The child writes 1 GiB; the kernel OOM-kills it (the biggest process in the container), the
    # skill notices and carries on with a result of its own.
    child = subprocess.run([sys.executable, "-c", "block = b'x' * (1 << 30)"], capture_output=True, text=True)
    # The engine's oom event reaches the service asynchronously; the flag is reported when it
    # arrives before the exit (docs/performance.md#no-inspect-after-a-clean-exit), so this skill,
    # like most, does some work of its own after the child died instead of exiting that instant.
    import time
    time.sleep(0.3)
    print(json.dumps({"child_returncode": child.returncode, "child_memory_error": "MemoryError" in child.stderr}))
    sys.exit(0)`),
      testPayload: OK_PAYLOAD,
    });
    const result = await invokeHostile("child_hog", { mode: "child_oom" });
    expect(result).toMatchObject({
      exitCode: 0,
      success: true,
      timedOut: false,
      // The engine reports an OOM kill of any process in the container: kept as information.
      oomKilled: true,
      errorSummary: "",
    });
    // SIGKILL from the kernel, not a MemoryError the child could have handled.
    expect(JSON.parse(result.stdout)).toEqual({ child_returncode: -9, child_memory_error: false });
    expect((await engine.client.get("child_hog")).skill).toMatchObject({ usageCount: 1, failureCount: 0 });
    await expectHealthyAndClean();
  });

  it("caps megabytes of stdout and stderr at the configured limit and flags both as truncated", async () => {
    await engine.client.register({
      name: "chatterbox",
      code: hostileSkill(`if mode == "flood":
    for _ in range(50):
        sys.stdout.write("o" * 100_000)
        sys.stderr.write("e" * 100_000)
    sys.stdout.write("\\nEND\\n")
    sys.exit(0)
if mode == "flood_utf8":
    # 3-byte characters: the cap falls inside a character.
    sys.stdout.write("\\u20ac" * 2_000_000)
    sys.exit(0)`),
      testPayload: OK_PAYLOAD,
    });

    const result = await invokeHostile("chatterbox", { mode: "flood" });
    expect(result).toMatchObject({
      exitCode: 0,
      success: true,
      timedOut: false,
      oomKilled: false,
      stdoutTruncated: true,
      stderrTruncated: true,
      errorSummary: "",
    });
    expect(Buffer.byteLength(result.stdout)).toBeLessThanOrEqual(OUTPUT_LIMIT);
    expect(Buffer.byteLength(result.stderr)).toBeLessThanOrEqual(OUTPUT_LIMIT);
    // What is kept is the head of each stream, byte for byte.
    expect(result.stdout).toBe("o".repeat(Buffer.byteLength(result.stdout)));
    expect(result.stderr).toBe("e".repeat(Buffer.byteLength(result.stderr)));
    expect(result.stdout.length).toBeGreaterThan(0);

    const utf8 = await invokeHostile("chatterbox", { mode: "flood_utf8" });
    expect(utf8).toMatchObject({ exitCode: 0, success: true, stdoutTruncated: true, stderrTruncated: false, stderr: "" });
    expect(Buffer.byteLength(utf8.stdout)).toBeLessThanOrEqual(OUTPUT_LIMIT);
    expect(utf8.stdout).toBe("\u20ac".repeat(utf8.stdout.length));
    expect(utf8.stdout).not.toContain("\uFFFD");

    // Output within the limit is not flagged.
    const small = await invokeHostile("chatterbox", { mode: "ok" });
    expect(small).toMatchObject({ stdoutTruncated: false, stderrTruncated: false, success: true });
    await expectHealthyAndClean();
  });

  it("answers a run whose two streams fill a large configured limit: the response limit grows with SKILL_ENGINE_OUTPUT_LIMIT_BYTES", async () => {
    // 6 MiB a stream: 12 MiB of output. With files limited to 1 MiB, a response was allowed 9 MiB whatever
    // the streams' limit, and the run's answer failed to send.
    const limit = 6 * 1024 * 1024;
    const loud = await startTestEngine({
      env: {
        SKILL_ENGINE_OUTPUT_LIMIT_BYTES: String(limit),
        SKILL_ENGINE_OUTPUT_INLINE_MB: "1",
        SKILL_ENGINE_INPUT_FILES_MB: "1",
        SKILL_ENGINE_CONTENT_GUARD: "warn",
      },
    });
    try {
      await loud.client.register({
        name: "loud",
        code: `import json, sys\nif json.loads(sys.argv[1]).get("loud"):\n    sys.stdout.write("o" * ${limit})\n    sys.stderr.write("e" * ${limit})\nelse:\n    print("ok")\n`,
        testPayload: "{}",
      });
      const response = await loud.client.invoke("loud", JSON.stringify({ loud: true }));
      expect(response.result).toMatchObject({ success: true, stdoutTruncated: false, stderrTruncated: false });
      expect(Buffer.byteLength(response.result?.stdout ?? "")).toBe(limit);
      expect(Buffer.byteLength(response.result?.stderr ?? "")).toBe(limit);
    } finally {
      await loud.dispose();
    }
  }, 120_000);

  it("contains a fork bomb and a subprocess bomb: the run ends, nothing is left running, the service stays up", async () => {
    await engine.client.register({
      name: "bomb",
      code: hostileSkill(`import signal, subprocess, time
if mode == "count_forks":
    # How far fork gets: the pids limit must stop it well before the host notices.
    children, error = [], None
    try:
        while True:
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError as e:
        error = type(e).__name__
    for pid in children:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print(json.dumps({"forked": len(children), "error": error}))
    sys.exit(0)
if mode == "fork_bomb":
    while True:
        try:
            os.fork()
        except OSError:
            pass
if mode == "spawn_bomb":
    while True:
        try:
            subprocess.Popen([sys.executable, sys.argv[0], sys.argv[1]])
        except OSError:
            pass`),
      testPayload: OK_PAYLOAD,
    });

    const counted = await invokeHostile("bomb", { mode: "count_forks" });
    expect(counted).toMatchObject({ exitCode: 0, success: true });
    const forks = JSON.parse(counted.stdout) as { forked: number; error: string };
    expect(forks.error).toBe("BlockingIOError");
    expect(forks.forked).toBeGreaterThan(0);
    expect(forks.forked).toBeLessThan(PIDS_LIMIT);

    for (const mode of ["fork_bomb", "spawn_bomb"]) {
      // The payload is every bomb process's argv[1]: a nonce there finds any survivor on the host.
      const nonce = `bomb-${randomUUID()}`;
      const result = await invokeHostile("bomb", { mode, nonce });
      expect(result.success, mode).toBe(false);
      expect(result.timedOut || result.oomKilled || result.exitCode !== 0, mode).toBe(true);
      expect(result.errorSummary, mode).not.toBe("");
      expect(await processesWith(nonce), mode).toEqual([]);
      await expectHealthyAndClean();
    }
  });

  it("summarizes a multi-line traceback as its exception line (even after megabytes of stderr), a crash by its signal", async () => {
    await engine.client.register({
      name: "raiser",
      code: hostileSkill(`def load(key):
    return {}[key]

def configure(key):
    try:
        load(key)
    except KeyError as e:
        raise RuntimeError(f"could not load config: {e}") from e

if mode == "raise":
    print("partial output")
    configure("missing")
if mode == "noisy_raise":
    sys.stderr.write("noise line\\n" * 500_000)
    configure("missing")
if mode == "segfault":
    import signal
    os.kill(os.getpid(), signal.SIGSEGV)`),
      testPayload: OK_PAYLOAD,
    });

    const result = await invokeHostile("raiser", { mode: "raise" });
    expect(result).toMatchObject({
      exitCode: 1,
      success: false,
      timedOut: false,
      oomKilled: false,
      stdout: "partial output\n",
      errorSummary: "line 11: RuntimeError: could not load config: 'missing'",
    });
    // The whole chained traceback is there; the summary is only its last exception line.
    expect(result.stderr).toContain("KeyError: 'missing'");
    expect(result.stderr).toContain("The above exception was the direct cause of the following exception:");
    expect(result.stderr.match(/Traceback \(most recent call last\):/g)).toHaveLength(2);

    const noisy = await invokeHostile("raiser", { mode: "noisy_raise" });
    expect(noisy).toMatchObject({
      exitCode: 1,
      success: false,
      stderrTruncated: true,
      errorSummary: "line 11: RuntimeError: could not load config: 'missing'",
    });

    // No traceback at all: the summary names the signal (the init process reports 128 + signo).
    const crashed = await invokeHostile("raiser", { mode: "segfault" });
    expect(crashed).toMatchObject({ exitCode: 139, success: false, oomKilled: false, timedOut: false, errorSummary: "killed by SIGSEGV" });
    await expectHealthyAndClean();
  });

  it("stops one file at the file-size limit (EFBIG) and /tmp at the tmpfs size (ENOSPC); nothing reaches the host disk", async () => {
    const code = hostileSkill(`import errno
${HOLD_PY}
def fill(paths, mb_each):
    written = 0
    try:
        for path in paths:
            with open(path, "wb") as f:
                for _ in range(mb_each):
                    f.write(b"x" * (1 << 20))
                    f.flush()
                    written += 1 << 20
    except OSError as e:
        return {"error": errno.errorcode.get(e.errno, str(e.errno)), "written": written}
    return {"error": None, "written": written}
if mode == "one_file":
    # One file four times the file-size limit, in the working directory (/tmp).
    big = fill(["big"], 4 * args["max_file_mb"])
    print(json.dumps({"cwd": os.getcwd(), "big": big, "size": os.path.getsize("/tmp/big")}))
    sys.exit(0)
if mode == "many_files":
    # Many 1 MiB files, four times the tmpfs size in total; then the host looks at its disk.
    files = fill([f"part{i}" for i in range(4 * args["tmpfs_mb"])], 1)
    usage = os.statvfs("/tmp")
    report = {"files": files, "tmp_used": (usage.f_blocks - usage.f_bfree) * usage.f_frsize, "tmp_free": usage.f_bavail * usage.f_frsize}
    hold(args["tag"])
    print(json.dumps(report))
    sys.exit(0)`);
    await engine.client.register({ name: "disk_filler", code, testPayload: OK_PAYLOAD });
    const MiB = 1024 * 1024;

    const one = await invokeHostile("disk_filler", { mode: "one_file", max_file_mb: MAX_FILE_MB });
    expect(one).toMatchObject({ exitCode: 0, success: true });
    // RLIMIT_FSIZE: Python ignores SIGXFSZ, so the write fails with EFBIG at exactly the limit,
    // with room left on the tmpfs.
    expect(JSON.parse(one.stdout)).toEqual({ cwd: "/tmp", big: { error: "EFBIG", written: MAX_FILE_MB * MiB }, size: MAX_FILE_MB * MiB });

    let duringRun: Record<string, number> = {};
    await runsCleanedUp(engine);
    const many = await invokeHolding("disk_filler", { mode: "many_files", tmpfs_mb: TMPFS_MB }, async () => {
      // /tmp is full now, and on the host the run still holds nothing but its code.
      duringRun = await entriesUnder(engine.sandboxDir);
    });
    expect(many).toMatchObject({ exitCode: 0, success: true, oomKilled: false });
    const report = JSON.parse(many.stdout) as { files: { error: string | null; written: number }; tmp_used: number; tmp_free: number };
    // The tmpfs fills up: ENOSPC at its configured size, far below the four times attempted.
    expect(report.files.error).toBe("ENOSPC");
    expect(report.files.written).toBeGreaterThanOrEqual((TMPFS_MB - 1) * MiB);
    expect(report.files.written).toBeLessThanOrEqual(TMPFS_MB * MiB);
    expect(report.tmp_used).toBeLessThanOrEqual(TMPFS_MB * MiB);
    expect(report.tmp_free).toBe(0);
    const runDirs = Object.keys(duringRun).filter((entry) => path.dirname(entry) === "runs");
    expect(runDirs).toHaveLength(1);
    // The run's code, and the empty mount point of its output space (a tmpfs inside the container).
    expect(duringRun).toEqual({
      runs: 0,
      [`${runDirs[0]}`]: 0,
      [`${runDirs[0]}/out`]: 0,
      [`${runDirs[0]}/skill.py`]: Buffer.byteLength(code),
    });
    await expectHealthyAndClean();
  });

  it("leaves no container and no run directory behind", async () => {
    await runsCleanedUp(engine);
  });
});
