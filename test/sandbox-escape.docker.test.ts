import { randomUUID } from "node:crypto";
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ExecutionResult } from "../src/gen/skillengine/v1/execution.js";
import { LABEL_SKILL } from "../src/execution/index.js";
import { containersOf, docker, runsCleanedUp, startTestEngine, type TestEngine } from "./support/test-engine.js";
import { entriesUnder, processesNamed } from "./support/host-probes.js";

/**
 * Escape attempts from inside the sandbox, each through a real server and a real container.
 * The skills behave on their registration payload ({"mode": "ok"}); invoked with the attack
 * payload they try something hostile, record what happened (exception class per attempt) as
 * JSON on stdout and exit 0, so the test can assert on every attempt.
 */

const OK_PAYLOAD = '{"mode": "ok"}';

/**
 * Python helpers every probe uses: `attempt(fn)` → "ok" or the exception's class name;
 * `errno_of(fn)` → "ok" or the errno's name ("EROFS", "EACCES", …); `hold(tag)` (see
 * invokeHolding) names the process `tag` and waits until the host sends SIGUSR1.
 */
const PRELUDE = `import errno, json, os, sys
args = json.loads(sys.argv[1])
mode = args.get("mode")

def attempt(fn):
    try:
        fn()
        return "ok"
    except BaseException as e:
        return type(e).__name__

def errno_of(fn):
    try:
        fn()
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, type(e).__name__)

def hold(tag):
    import ctypes, signal
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    ctypes.CDLL(None).prctl(15, tag.encode(), 0, 0, 0)  # PR_SET_NAME: /proc/<pid>/comm on the host
    signal.sigwait({signal.SIGUSR1})

def mount_of(path):
    # /proc/self/mountinfo: id parent dev root mountpoint options [tags] - fstype source superoptions
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            if fields[4] == path:
                sep = fields.index("-")
                found = {"options": fields[5].split(","), "fstype": fields[sep + 1], "super": fields[sep + 3].split(",")}
    return found

def report(results):
    print(json.dumps(results))
    sys.exit(0)
`;

function probeSkill(body: string): string {
  return `${PRELUDE}
if mode == "attack":
${body
  .split("\n")
  .map((line) => (line === "" ? line : `    ${line}`))
  .join("\n")}
print(json.dumps({"ok": True}))
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

interface FileSnapshot {
  content: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtimeMs: number;
}

async function snapshotFile(file: string): Promise<FileSnapshot> {
  const info = await stat(file);
  return {
    content: await readFile(file, "utf8"),
    mode: info.mode,
    uid: info.uid,
    gid: info.gid,
    size: info.size,
    mtimeMs: info.mtimeMs,
  };
}

async function snapshotDir(dir: string): Promise<{ entries: string[]; mode: number; uid: number; mtimeMs: number }> {
  const info = await stat(dir);
  return { entries: (await readdir(dir)).sort(), mode: info.mode, uid: info.uid, mtimeMs: info.mtimeMs };
}

/** Host addresses a container might try: the docker bridge gateway and this host's interfaces. */
async function hostAddresses(): Promise<string[]> {
  const addresses = new Set<string>(["172.17.0.1"]);
  try {
    const bridge = await docker.getNetwork("bridge").inspect();
    for (const config of (bridge.IPAM?.Config ?? []) as Array<{ Gateway?: string }>) {
      if (config.Gateway) addresses.add(config.Gateway);
    }
  } catch {
    // No default bridge on this engine: the fixed address is still worth a try.
  }
  for (const list of Object.values(os.networkInterfaces())) {
    for (const address of list ?? []) {
      if (address.family === "IPv4" && !address.internal) addresses.add(address.address);
    }
  }
  return [...addresses];
}

describe("sandbox escape attempts through a real server and real containers", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    // The content guard would reject most of these skills; the point here is that the sandbox
    // contains them even when the guard is not there to help.
    engine = await startTestEngine({ env: { SKILL_ENGINE_CONTENT_GUARD: "warn" } });
  });
  afterAll(async () => {
    await engine?.dispose();
  });

  async function registerProbe(name: string, body: string): Promise<void> {
    const response = await engine.client.register({ name, code: probeSkill(body), testPayload: OK_PAYLOAD });
    expect(response.test?.success).toBe(true);
  }

  async function attack(name: string, payload: Record<string, unknown> = {}): Promise<{ result: ExecutionResult; report: any }> {
    const { result } = await engine.client.invoke(name, JSON.stringify({ mode: "attack", ...payload }));
    if (!result) throw new Error("InvokeSkill returned no result");
    return checkedReport(name, result);
  }

  /**
   * Like attack(), for a skill that ends in `hold(args["tag"])`: `whileHeld` runs on the host while
   * the skill waits there with its container running, then SIGUSR1 (forwarded to the skill by the
   * container's init) lets it finish. No clock: the host waits for the process to take its name.
   */
  async function attackHolding(
    name: string,
    payload: Record<string, unknown>,
    whileHeld: () => Promise<void>,
  ): Promise<{ result: ExecutionResult; report: any }> {
    const tag = `held-${randomUUID().slice(0, 8)}`;
    let settled = false;
    const call = engine.client.invoke(name, JSON.stringify({ mode: "attack", ...payload, tag }));
    call.then(
      () => (settled = true),
      () => (settled = true),
    );
    try {
      while (!settled && (await processesNamed(tag)).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      if (settled) throw new Error(`${name} finished without holding: ${JSON.stringify((await call).result)}`);
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
    const { result } = await call;
    if (!result) throw new Error("InvokeSkill returned no result");
    return checkedReport(name, result);
  }

  function checkedReport(name: string, result: ExecutionResult): { result: ExecutionResult; report: any } {
    if (process.env.SANDBOX_TEST_VERBOSE) console.log(name, JSON.stringify(result, null, 1));
    expect(result, result.stderr).toMatchObject({ exitCode: 0, success: true, timedOut: false, oomKilled: false });
    return { result, report: JSON.parse(result.stdout) };
  }

  async function expectNothingLeft(): Promise<void> {
    await runsCleanedUp(engine);
  }

  it("cannot open any network connection or resolve a name", async () => {
    await registerProbe(
      "net_probe",
      `import socket
def tcp(host, port):
    socket.create_connection((host, port), timeout=3).close()
def udp_dns():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01", ("1.1.1.1", 53))
    s.recvfrom(512)
def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(3)
    s.connect(path)
results = {"tcp": {}, "other": {}}
for host, port in args["targets"]:
    results["tcp"][f"{host}:{port}"] = attempt(lambda: tcp(host, port))
results["other"]["udp 1.1.1.1:53"] = attempt(udp_dns)
results["other"]["getaddrinfo"] = attempt(lambda: socket.getaddrinfo("example.com", 443))
results["other"]["gethostbyname"] = attempt(lambda: socket.gethostbyname("example.com"))
results["other"]["docker.sock"] = attempt(lambda: unix("/var/run/docker.sock"))
results["other"]["run/docker.sock"] = attempt(lambda: unix("/run/docker.sock"))
with open("/proc/net/dev") as f:
    results["interfaces"] = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
report(results)`,
    );

    const targets: Array<[string, number]> = [
      ["1.1.1.1", 53],
      ["1.1.1.1", 443],
      ...(await hostAddresses()).flatMap((host): Array<[string, number]> => [
        [host, 2375],
        [host, 2376],
        [host, engine.app.port],
      ]),
      // The container's loopback is its own: the service's port there is not the service.
      ["127.0.0.1", engine.app.port],
      ["127.0.0.1", 2375],
    ];
    const { report } = await attack("net_probe", { targets });

    // Only a loopback interface exists.
    expect(report.interfaces).toEqual(["lo"]);
    for (const [target, outcome] of Object.entries(report.tcp as Record<string, string>)) {
      expect(outcome, target).not.toBe("ok");
      const expected = target.startsWith("127.0.0.1:") ? "ConnectionRefusedError" : "OSError"; // ENETUNREACH
      expect(outcome, target).toBe(expected);
    }
    expect(Object.keys(report.tcp)).toHaveLength(targets.length);
    expect(report.other).toEqual({
      "udp 1.1.1.1:53": "OSError",
      getaddrinfo: "gaierror",
      gethostbyname: "gaierror",
      "docker.sock": "FileNotFoundError",
      "run/docker.sock": "FileNotFoundError",
    });
    await expectNothingLeft();
  });

  it("cannot see the canonical store, the registry or the sandbox dir on the host", async () => {
    await registerProbe(
      "store_probe",
      `results = {}
for label, path in args["paths"].items():
    results[label] = {
        "exists": os.path.lexists(path),
        "open": attempt(lambda: open(path, "rb").read(1)),
        "list": attempt(lambda: os.listdir(path)),
    }
results["sandbox_listing"] = sorted(os.listdir("/sandbox"))
results["own_code_readable"] = attempt(lambda: open("/sandbox/skill.py").read())
report(results)`,
    );
    const canonical = path.join(engine.home, "memory", "acquired_skills", "store_probe.py");
    // Sanity: the files exist on the host, so "not found" inside means "not visible".
    await stat(canonical);
    await stat(path.join(engine.home, "registry.db"));

    const paths = {
      canonical,
      history: path.join(engine.home, "memory", "acquired_skills", ".versions", "store_probe", "1.py"),
      mirror: path.join(engine.home, "memory", "acquired_skills", ".registry", "store_probe.json"),
      registry: path.join(engine.home, "registry.db"),
      home: engine.home,
      sandboxDir: engine.sandboxDir,
      runsDir: path.join(engine.sandboxDir, "runs"),
    };
    const { report } = await attack("store_probe", { paths });
    for (const label of Object.keys(paths)) {
      expect(report[label], label).toEqual({ exists: false, open: "FileNotFoundError", list: "FileNotFoundError" });
    }
    // It sees its own run directory, holding only its own code, and nothing of other runs.
    expect(report.sandbox_listing).toEqual(["out", "skill.py"]);
    expect(report.own_code_readable).toBe("ok");
    await expectNothingLeft();
  });

  it("cannot write outside its working dir /tmp nor to its read-only run dir, cannot exec from /tmp, runs as uid 10001 without caps", async () => {
    await registerProbe(
      "fs_probe",
      `import shutil, stat, subprocess
def write(path):
    with open(path, "w") as f:
        f.write("pwned")
results = {"write": {}, "sandbox": {}, "exec": {}, "ids": {}, "status": {}}
for d in ["/", "/etc", "/usr", "/usr/lib", "/bin", "/root", "/var", "/sandbox", "/sandbox/..", "/sandbox/../etc"]:
    results["write"][d] = attempt(lambda: write(os.path.join(d, "planted")))
results["write"]["/etc/passwd"] = attempt(lambda: open("/etc/passwd", "a").write("x"))
results["write"]["/proc/sys/kernel/hostname"] = attempt(lambda: open("/proc/sys/kernel/hostname", "w").write("x"))
results["write"]["/sandbox/skill.py"] = attempt(lambda: open("/sandbox/skill.py", "a").write("x"))
results["write"]["mkdir /opt/x"] = attempt(lambda: os.mkdir("/opt/x"))

# The run directory is a read-only mount: every kind of change is refused.
results["sandbox"]["create file"] = errno_of(lambda: write("/sandbox/scratch"))
results["sandbox"]["truncate skill.py"] = errno_of(lambda: open("/sandbox/skill.py", "w").close())
results["sandbox"]["append skill.py"] = errno_of(lambda: open("/sandbox/skill.py", "a").close())
results["sandbox"]["remove skill.py"] = errno_of(lambda: os.remove("/sandbox/skill.py"))
results["sandbox"]["chmod skill.py"] = errno_of(lambda: os.chmod("/sandbox/skill.py", 0o777))
results["sandbox"]["mkdir"] = errno_of(lambda: os.mkdir("/sandbox/dir"))
results["sandbox"]["chmod dir"] = errno_of(lambda: os.chmod("/sandbox", 0o777))
results["sandbox"]["copy binary"] = errno_of(lambda: shutil.copy("/bin/true", "/sandbox/true-copy"))
results["sandbox_listing"] = sorted(os.listdir("/sandbox"))

# The working directory is /tmp, the one writable place.
results["cwd"] = os.getcwd()
results["relative write"] = attempt(lambda: write("scratch.txt"))
results["relative lands in /tmp"] = os.path.isfile("/tmp/scratch.txt")
results["write /tmp"] = attempt(lambda: write("/tmp/scratch"))
results["tmp_mode"] = oct(stat.S_IMODE(os.stat("/tmp").st_mode))
results["mounts"] = {p: mount_of(p) for p in ["/", "/sandbox", "/tmp"]}

def exec_copy(where):
    target = os.path.join(where, "true-copy")
    shutil.copy("/bin/true", target)
    os.chmod(target, 0o755)
    subprocess.run([target], check=True)
results["exec"]["/tmp"] = attempt(lambda: exec_copy("/tmp"))
results["exec"]["/dev/shm"] = attempt(lambda: exec_copy("/dev/shm"))
results["exec"]["/sandbox"] = attempt(lambda: exec_copy("/sandbox"))

results["ids"] = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups()}
results["setuid0"] = attempt(lambda: os.setuid(0))
results["chown"] = attempt(lambda: os.chown("/tmp/scratch", 0, 0))
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        if key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp"):
            results["status"][key] = value.strip()
report(results)`,
    );
    const { report } = await attack("fs_probe");

    for (const [target, outcome] of Object.entries(report.write as Record<string, string>)) {
      // EROFS (read-only root or mount) surfaces as OSError, EACCES as PermissionError.
      expect(["OSError", "PermissionError"], `${target}: ${outcome}`).toContain(outcome);
    }
    // The root filesystem and the run directory are read-only, not merely unwritable by this user.
    expect(report.write["/"]).toBe("OSError");
    expect(report.write["/etc"]).toBe("OSError");
    expect(report.write["/sandbox"]).toBe("OSError");
    // The skill file is the engine's, read-only for the sandbox user: for an open that does not
    // truncate, the file's 0444 mode (EACCES) is checked before the read-only mount.
    expect(report.write["/sandbox/skill.py"]).toBe("PermissionError");
    expect(report.sandbox).toEqual({
      "create file": "EROFS",
      "truncate skill.py": "EROFS",
      "append skill.py": "EACCES",
      "remove skill.py": "EROFS",
      "chmod skill.py": "EROFS",
      mkdir: "EROFS",
      "chmod dir": "EROFS",
      "copy binary": "EROFS",
    });
    expect(report.sandbox_listing).toEqual(["out", "skill.py"]);

    // Its working directory is /tmp, where (and only where) it can write.
    expect(report.cwd).toBe("/tmp");
    expect(report["relative write"]).toBe("ok");
    expect(report["relative lands in /tmp"]).toBe(true);
    expect(report["write /tmp"]).toBe("ok");
    expect(report.tmp_mode).toBe("0o1777");
    expect(report.mounts["/"].options).toContain("ro");
    expect(report.mounts["/sandbox"].options).toContain("ro");
    expect(report.mounts["/tmp"]).toMatchObject({ fstype: "tmpfs" });
    expect(report.mounts["/tmp"].options).toEqual(expect.arrayContaining(["rw", "nosuid", "nodev", "noexec"]));
    expect(report.mounts["/tmp"].super).toContain(`size=${engine.config.limits.tmpfsBytes / 1024}k`);

    expect(report.exec["/tmp"]).toBe("PermissionError"); // noexec tmpfs
    expect(report.exec["/dev/shm"]).toBe("PermissionError"); // noexec by default
    expect(report.exec["/sandbox"]).toBe("OSError"); // the copy itself fails: EROFS
    // Not asserted: /dev/shm (the engine's default 64 MiB shm tmpfs, noexec) is writable too,
    // outside SKILL_ENGINE_TMPFS_MB; like /tmp it is memory, never the host disk.

    expect(report.ids).toEqual({ uid: 10001, euid: 10001, gid: 10001, groups: [10001] });
    expect(report.setuid0).toBe("PermissionError");
    expect(report.chown).toBe("PermissionError");
    expect(report.status).toEqual({
      CapInh: "0000000000000000",
      CapPrm: "0000000000000000",
      CapEff: "0000000000000000",
      CapBnd: "0000000000000000",
      CapAmb: "0000000000000000",
      NoNewPrivs: "1",
      Seccomp: "2", // the engine's default seccomp profile, in filter mode
    });
    await expectNothingLeft();
  });

  describe("links, locked dirs and lingering processes planted in the run dir", () => {
    let sentinelDir: string;
    let sentinel: string;

    beforeAll(async () => {
      // Outside the sandbox dir and the home, like any host file the skill should never reach.
      sentinelDir = await mkdtemp(path.join(os.tmpdir(), "skill-engine-sentinel-"));
      sentinel = path.join(sentinelDir, "sentinel.txt");
      await writeFile(sentinel, "do not touch\n");
      await chmod(sentinel, 0o640);
      await writeFile(path.join(sentinelDir, "neighbour.txt"), "me neither\n");
    });
    afterAll(async () => {
      if (sentinelDir) await rm(sentinelDir, { recursive: true, force: true });
    });

    it("cannot plant anything in the read-only run dir; what it plants in /tmp never reaches the host", async () => {
      await registerProbe(
        "link_planter",
        `import time
sentinel, sentinel_dir = args["sentinel"], args["sentinelDir"]
links = {
    "sentinel_link": sentinel,
    "passwd_link": "/etc/passwd",
    "dir_link": sentinel_dir,
    "root_link": "/",
    "up_link": "..",
    "etc_link": "/etc",
}
def swap(path):
    # A code file swapped for a link to the host sentinel (in /tmp: a new link named skill.py).
    if os.path.lexists(path):
        os.remove(path)
    os.symlink(sentinel, path)
def locked(S):
    # Hard to delete: nested dirs with links inside, then mode 000 from the bottom up.
    os.makedirs(S + "/locked/deeper/deepest")
    os.symlink(sentinel_dir, S + "/locked/deeper/deepest/dir_link")
    os.symlink(sentinel, S + "/locked/deeper/sentinel_link")
    with open(S + "/locked/deeper/file", "w") as f:
        f.write("x")
    os.chmod(S + "/locked/deeper/file", 0)
    os.chmod(S + "/locked/deeper/deepest", 0)
    os.chmod(S + "/locked/deeper", 0)
    os.chmod(S + "/locked", 0)
def write_through(path):
    with open(path, "a") as f:
        f.write("pwned\\n")
def plant_all(S):
    results = {"plant": {}, "write": {}}
    for name, target in links.items():
        results["plant"]["link " + name] = errno_of(lambda: os.symlink(target, os.path.join(S, name)))
    results["plant"]["swap skill.py"] = errno_of(lambda: swap(S + "/skill.py"))
    results["plant"]["locked dirs"] = errno_of(lambda: locked(S))
    results["plant"]["fifo"] = errno_of(lambda: os.mkfifo(S + "/fifo"))
    results["plant"]["unreadable file"] = errno_of(lambda: (open(S + "/unreadable", "w").close(), os.chmod(S + "/unreadable", 0)))
    # Writes through the links resolve inside the container, never on the host.
    results["write"]["sentinel_link"] = errno_of(lambda: write_through(S + "/sentinel_link"))
    results["write"]["passwd_link"] = errno_of(lambda: write_through(S + "/passwd_link"))
    results["write"]["dir_link/neighbour.txt"] = errno_of(lambda: write_through(S + "/dir_link/neighbour.txt"))
    results["write"]["chmod dir_link"] = errno_of(lambda: os.chmod(S + "/dir_link", 0o777))
    results["entries"] = sorted(os.listdir(S))
    return results
results = {"sandbox": plant_all("/sandbox"), "tmp": plant_all("/tmp")}
results["tmp_fstype"] = mount_of("/tmp")["fstype"]
# A child that outlives the skill and keeps planting links in both places while the engine cleans up.
pid = os.fork()
if pid == 0:
    os.setsid()
    for i in range(600):
        for S in ("/sandbox", "/tmp"):
            try:
                os.symlink(sentinel_dir, f"{S}/late_link_{i}")
            except OSError:
                pass
        time.sleep(0.05)
    os._exit(0)
# Everything is planted and the child is running: the host looks at its disk now.
hold(args["tag"])
report(results)`,
      );

      const before = {
        sentinel: await snapshotFile(sentinel),
        neighbour: await snapshotFile(path.join(sentinelDir, "neighbour.txt")),
        sentinelDir: await snapshotDir(sentinelDir),
        passwd: await snapshotFile("/etc/passwd"),
        etc: await snapshotDir("/etc"),
      };
      const code = (await engine.client.get("link_planter")).code;
      const nonce = `planter-${randomUUID()}`;
      let duringRun: Record<string, number> = {};
      await runsCleanedUp(engine);
      const { report } = await attackHolding("link_planter", { sentinel, sentinelDir, nonce }, async () => {
        // Mid-run, with everything planted in /tmp: the host holds only the run's own code file, and
        // the empty mount point of its output space (a tmpfs inside the container: docs/files.md#output-files).
        duringRun = await entriesUnder(engine.sandboxDir);
        expect(await snapshotDir(sentinelDir)).toEqual(before.sentinelDir);
      });
      const runDirs = Object.keys(duringRun).filter((entry) => path.dirname(entry) === "runs");
      expect(runDirs).toHaveLength(1);
      expect(duringRun).toEqual({
        runs: 0,
        [`${runDirs[0]}`]: 0,
        [`${runDirs[0]}/out`]: 0,
        [`${runDirs[0]}/skill.py`]: Buffer.byteLength(code),
      });

      // The run dir is a read-only mount: every plant fails, so there is no link to write through
      // (writing creates a file there: EROFS; the links' paths do not exist: ENOENT).
      for (const [key, outcome] of Object.entries(report.sandbox.plant)) expect(outcome, `/sandbox ${key}`).toBe("EROFS");
      expect(report.sandbox.write).toEqual({
        sentinel_link: "EROFS",
        passwd_link: "EROFS",
        "dir_link/neighbour.txt": "ENOENT",
        "chmod dir_link": "ENOENT",
      });
      expect(report.sandbox.entries).toEqual(["out", "skill.py"]);

      // In /tmp every plant succeeds (the test would prove nothing otherwise)…
      for (const [key, outcome] of Object.entries(report.tmp.plant)) expect(outcome, `/tmp ${key}`).toBe("ok");
      expect(report.tmp.entries).toEqual(
        expect.arrayContaining(["sentinel_link", "passwd_link", "dir_link", "locked", "fifo", "skill.py", "unreadable"]),
      );
      // …and every write through a link fails, since the targets do not exist in the container
      // or sit on its read-only root.
      expect(report.tmp.write["sentinel_link"]).toBe("ENOENT");
      // EACCES (root's file) is checked before EROFS (read-only root) for existing files.
      expect(["EROFS", "EACCES"]).toContain(report.tmp.write["passwd_link"]);
      expect(report.tmp.write["dir_link/neighbour.txt"]).toBe("ENOENT");
      expect(report.tmp.write["chmod dir_link"]).toBe("ENOENT");
      // /tmp is a tmpfs: memory of the container, gone with it.
      expect(report.tmp_fstype).toBe("tmpfs");

      // Nothing on the host changed.
      expect(await snapshotFile(sentinel)).toEqual(before.sentinel);
      expect(await snapshotFile(path.join(sentinelDir, "neighbour.txt"))).toEqual(before.neighbour);
      expect(await snapshotDir(sentinelDir)).toEqual(before.sentinelDir);
      expect(await snapshotFile("/etc/passwd")).toEqual(before.passwd);
      expect((await snapshotDir("/etc")).entries).toEqual(before.etc.entries);

      // The container (with the lingering child) and the run directory are gone.
      expect(await processesWith(nonce)).toEqual([]);
      await expectNothingLeft();
      // Still nothing, once anything that might have lingered had time to act.
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await readdir(path.join(engine.sandboxDir, "runs"))).toEqual([]);
      expect(await snapshotDir(sentinelDir)).toEqual(before.sentinelDir);
    });
  });

  it("cannot alter its canonical code or later runs by rewriting /sandbox/skill.py or planting modules", async () => {
    const name = "self_rewriter";
    const code = `${PRELUDE}
import subprocess
EVIL = 'print("{\\\\"tampered\\\\": true}")\\n'
def child_json():
    # A fresh interpreter in the working directory: '' (the cwd, /tmp) leads its sys.path.
    child = subprocess.run([sys.executable, "-c", "import json; print(json.__file__)"], capture_output=True, text=True)
    return child.stdout
if mode == "attack":
    results = {}
    def overwrite():
        with open("/sandbox/skill.py", "w") as f:
            f.write(EVIL)
    results["overwrite in place"] = errno_of(overwrite)
    def replace():
        os.remove("/sandbox/skill.py")
        with open("/sandbox/skill.py", "w") as f:
            f.write(EVIL)
    results["unlink and recreate"] = errno_of(replace)
    results["rename over"] = errno_of(lambda: os.rename("/sandbox/skill.py", "/sandbox/old.py"))
    results["skill.py now"] = open("/sandbox/skill.py").read()
    # Shadow a stdlib module for later runs: next to the script, in the working directory, in the
    # user site (HOME is /tmp), in the stdlib.
    def plant(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("print('tampered')\\n")
    results["plant /sandbox/json.py"] = errno_of(lambda: plant("/sandbox/json.py"))
    results["plant json.py in cwd"] = attempt(lambda: plant(os.path.join(os.getcwd(), "json.py")))
    site = f"/tmp/.local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages/usercustomize.py"
    results["plant usercustomize"] = attempt(lambda: plant(site))
    results["plant sitecustomize"] = attempt(lambda: plant(os.path.join(os.path.dirname(os.__file__), "sitecustomize.py")))
    results["patch json/__init__.py"] = attempt(lambda: open(json.__file__, "a").write("print('tampered')\\n"))
    # The plants in /tmp do work within this run: a new interpreter here picks both up.
    results["child json now"] = child_json()
    report(results)
print(json.dumps({"original": True, "tmp": sorted(os.listdir("/tmp")), "sandbox": sorted(os.listdir("/sandbox")), "child_json": child_json()}))
`;
    const registered = await engine.client.register({ name, code, testPayload: OK_PAYLOAD });
    const hash = registered.skill?.contentHash;
    const canonicalPath = path.join(engine.home, "memory", "acquired_skills", `${name}.py`);

    const { report } = await attack(name);
    // The run dir is a read-only mount: the file cannot be rewritten, replaced or moved, and
    // nothing can be planted next to it.
    expect(report["overwrite in place"]).toBe("EROFS");
    expect(report["unlink and recreate"]).toBe("EROFS");
    expect(report["rename over"]).toBe("EROFS");
    expect(report["skill.py now"]).toBe(code);
    expect(report["plant /sandbox/json.py"]).toBe("EROFS");
    // The working directory and the user site are the skill's own scratch space (/tmp)…
    expect(report["plant json.py in cwd"]).toBe("ok");
    expect(report["plant usercustomize"]).toBe("ok");
    expect(["OSError", "PermissionError"]).toContain(report["plant sitecustomize"]);
    expect(["OSError", "PermissionError"]).toContain(report["patch json/__init__.py"]);
    // …where the plants are live for the rest of this run (usercustomize and json.py each print).
    expect(report["child json now"]).toBe("tampered\ntampered\n/tmp/json.py\n");

    // Canonical copy, registry and GetSkill are unchanged…
    const got = await engine.client.get(name);
    expect(got.code).toBe(code);
    expect(got.skill?.contentHash).toBe(hash);
    expect(got.skill?.version).toBe(1);
    expect(await readFile(canonicalPath, "utf8")).toBe(code);

    // …and the next run starts from a fresh run dir and a fresh /tmp, with the original code and
    // the stdlib's json.
    const next = await engine.client.invoke(name, OK_PAYLOAD);
    expect(next.result).toMatchObject({ success: true, exitCode: 0, stderr: "" });
    const nextReport = JSON.parse(next.result?.stdout ?? "");
    expect(nextReport).toMatchObject({ original: true, tmp: [], sandbox: ["out", "skill.py"] });
    expect(nextReport.child_json).toMatch(/^\/usr\/.*\/json\/__init__\.py\n$/);
    await expectNothingLeft();
  });

  it("leaves no container and no run directory behind", async () => {
    await expectNothingLeft();
  });
});
