import { EGRESS_FORWARDER_SCRIPT } from "./egress-forwarder.js";

/**
 * The entry script: the program every sandbox container starts with (a warm one waits in the
 * pool, a cold one gets its job as soon as it has started): Python is loaded (with json, which
 * nearly every skill imports) and blocks on stdin for exactly one job: a 4-byte big-endian length
 * and a JSON object `{"payload": …, "nonce": …}`. The payload never appears on a command line, where `ps` would show
 * it to any local user. The run's secrets (docs/security.md#declaring-and-delivering) come in the same
 * object as `"env"`: they are taken out of it and set in `os.environ` (the process's environment,
 * which a subprocess of the skill inherits), so they are never in the container's configuration,
 * on a command line or in a file. It then gives the skill `sys.argv == ["/sandbox/skill.py", payload]`,
 * `__name__ == "__main__"`, `sys.path[0] == "/sandbox"` and stdin at EOF, and runs
 * `/sandbox/skill.py` in the same interpreter.
 *
 * When the skill is done (normally, by `sys.exit`, or by an exception, whose traceback is printed
 * through `sys.excepthook` as usual but from the skill's own frames on: the frames of this script, of
 * `runpy` and of a folder skill's launcher, which hand control over with `runpy`, are dropped, so a
 * failed run's stderr and its one-line cause speak of the skill's code only:
 * docs/skill-lifecycle.md#success), non-daemon threads are joined and atexit handlers run, as at
 * interpreter exit; then an exit marker carrying the nonce and the exit code is written to stdout
 * and to stderr, and the process ends. The marker lets the host answer without waiting for the engine to report the
 * container's exit (tens of milliseconds); the host strips it from the output. A skill that forges
 * it gains nothing: it only ends its own run early. A skill that never reaches it (killed, timed
 * out, `os._exit`) is judged by the container's exit.
 * EOF before a job (pool shutdown) exits quietly. The container is never given a second job.
 *
 * Handing back output files costs the run as little as it can (docs/performance.md#files-in-and-out):
 * a warm container, whose stdin is still empty when it is ready, imports hashlib (OpenSSL: a few ms
 * of CPU) while it waits, and a cold one, whose job is already there, does not (a run without files
 * never needs it); the frame goes out as header and manifest in one write, then the files' bytes as
 * they were read, never joined into one more copy.
 */
export const CONTAINER_ENTRY_SCRIPT = `
import json, os, runpy, struct, sys
${EGRESS_FORWARDER_SCRIPT}
def _read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:
            os._exit(0)
        data += chunk
    return data
import select
if not select.select([0], [], [], 0)[0]:
    import hashlib
(_size,) = struct.unpack(">I", _read(4))
_job = json.loads(_read(_size).decode("utf-8"))
_env = _job.pop("env", None)
if _env:
    os.environ.update(_env)
_null = os.open("/dev/null", os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
sys.argv = ["/sandbox/skill.py", _job["payload"]]
sys.path[0] = "/sandbox"
_nonce = _job["nonce"]
_out = _job.get("out")
if _job.get("egress"):
    _start_egress(_job["egress"])
del _read, _size, _job, _env, _null, _start_egress
def _own_frames(tb):
    def handing_over(tb):
        return tb is not None and tb.tb_frame.f_globals.get("__name__") == "runpy"
    while tb is not None and (handing_over(tb) or handing_over(tb.tb_next)):
        tb = tb.tb_next
    return tb
_code = 0
try:
    runpy.run_path("/sandbox/skill.py", run_name="__main__")
except SystemExit as _exit:
    if _exit.code is None:
        _code = 0
    elif isinstance(_exit.code, int):
        _code = _exit.code & 0xFF
    else:
        print(_exit.code, file=sys.stderr)
        _code = 1
except BaseException as _error:
    _code = 1
    _tb = _own_frames(_error.__traceback__)
    sys.excepthook(type(_error), _error.with_traceback(_tb), _tb)
    del _tb
try:
    if "threading" in sys.modules:
        sys.modules["threading"]._shutdown()
    import atexit
    atexit._run_exitfuncs()
except BaseException:
    pass
for _stream in (sys.stdout, sys.stderr):
    try:
        _stream.flush()
    except BaseException:
        pass
def _write_all(data):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]
def _send_files(limits):
    import hashlib, stat
    root = "/sandbox/out"
    files, skipped, blobs = [], [], []
    tally = {"skipped": 0, "more": 0, "budget": limits["total"], "inline": 0}
    def skip(path, kind):
        tally["skipped"] += 1
        if len(skipped) < 100:
            skipped.append({"path": path, "kind": kind})
    def read(path, full):
        try:
            fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            return skip(path, "unreadable")
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return skip(path, "not a regular file")
            keep = min(limits["file"], tally["budget"])
            digest, kept, size = hashlib.sha256(), [], 0
            while True:
                chunk = os.read(fd, 1048576)
                if not chunk:
                    break
                digest.update(chunk)
                if size < keep:
                    kept.append(chunk if size + len(chunk) <= keep else chunk[: keep - size])
                size += len(chunk)
            inline = min(size, keep)
            tally["budget"] -= inline
            tally["inline"] += inline
            blobs.extend(kept)
            files.append({"path": path, "size": size, "sha256": digest.hexdigest(), "inline": inline})
        finally:
            os.close(fd)
    def visit(rel, depth):
        try:
            names = sorted(os.listdir(root + "/" + rel if rel else root))
        except OSError:
            return skip(rel or ".", "unreadable directory")
        for name in names:
            path = rel + "/" + name if rel else name
            try:
                mode = os.lstat(root + "/" + path).st_mode
            except OSError:
                continue
            if stat.S_ISDIR(mode):
                if depth >= 32:
                    skip(path, "directory nested too deep")
                else:
                    visit(path, depth + 1)
            elif stat.S_ISLNK(mode):
                skip(path, "symbolic link")
            elif not stat.S_ISREG(mode):
                skip(path, "fifo" if stat.S_ISFIFO(mode) else "socket" if stat.S_ISSOCK(mode) else "device")
            elif len(files) >= limits["count"]:
                tally["more"] += 1
            else:
                read(path, root + "/" + path)
    visit("", 0)
    full = False
    try:
        full = os.statvfs(root).f_bavail == 0
    except OSError:
        pass
    manifest = json.dumps({"files": files, "skipped": skipped, "skipped_count": tally["skipped"], "more": tally["more"], "full": full}).encode()
    _write_all(("\\0\\x1eskill-engine-files:%s:%d:%d\\x1e\\0" % (_nonce, len(manifest), tally["inline"])).encode() + manifest)
    for blob in blobs:
        _write_all(blob)
try:
    if _out is not None and os.listdir("/sandbox/out"):
        _send_files(_out)
except BaseException:
    pass
_marker = ("\\0\\x1eskill-engine-exit:%s:%d\\x1e\\0" % (_nonce, _code)).encode()
for _fd in (1, 2):
    try:
        os.write(_fd, _marker)
    except OSError:
        pass
os._exit(_code)
`;

/** What the entry script may send back of `/sandbox/out/` (docs/files.md#output-files). */
export interface OutputFrameLimits {
  /** Files at most. */
  readonly count: number;
  /** Inline bytes of one file at most. */
  readonly file: number;
  /** Inline bytes of all files together at most. */
  readonly total: number;
}

/**
 * The frame that hands a container its one job; `env`: the run's secrets, set in the skill's
 * environment by the entry script (absent or empty: none); `egress`: the gateway's socket in the
 * container, which the entry script's forwarder relays to (absent: no network, docs/security.md#egress).
 */
export function jobFrame(
  payload: string,
  nonce: string,
  out: OutputFrameLimits,
  env?: Readonly<Record<string, string>>,
  egress?: string,
): Buffer {
  const job: Record<string, unknown> = { payload, nonce, out };
  if (env && Object.keys(env).length > 0) job.env = env;
  if (egress) job.egress = egress;
  const body = Buffer.from(JSON.stringify(job), "utf8");
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
}

/** The bytes the entry script writes after the skill, up to the exit code. */
export function exitMarkerPrefix(nonce: string): Buffer {
  return Buffer.from(`\0\x1eskill-engine-exit:${nonce}:`, "latin1");
}

/**
 * What starts the frame of output files the entry script writes to stdout just before its exit
 * marker, when `/sandbox/out/` holds anything: `<manifest bytes>:<data bytes>`, {@link EXIT_MARKER_END},
 * then a JSON manifest and the files' inline bytes in its order (docs/files.md#output-files).
 */
export function filesFramePrefix(nonce: string): Buffer {
  return Buffer.from(`\0\x1eskill-engine-files:${nonce}:`, "latin1");
}

/** What ends the exit marker (and the output files frame's header). */
export const EXIT_MARKER_END = Buffer.from("\x1e\0", "latin1");
