import { createHash } from "node:crypto";
import { readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InputFile, InvokeSkillResponse } from "../src/gen/skillengine/v1/execution.js";
import { rpcError, runsCleanedUp, startTestEngine, type TestEngine, whileItsContainerRuns } from "./support/test-engine.js";

/** Reads a CSV from /sandbox/in, draws its values as an SVG bar chart by hand, and summarises them. */
const CHART_SKILL = `import csv, json, os, sys
args = json.loads(sys.argv[1])
with open("/sandbox/in/" + args["csv"]) as f:
    rows = list(csv.DictReader(f))
values = [float(r["value"]) for r in rows]
bars = "".join(
    '<rect x="%d" y="%d" width="18" height="%d"/>' % (i * 20, 100 - v, v) for i, v in enumerate(values)
)
os.makedirs("/sandbox/out/report", exist_ok=True)
with open("/sandbox/out/chart.svg", "w") as f:
    f.write('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="100">%s</svg>' % (20 * len(values), bars))
with open("/sandbox/out/report/summary.csv", "w") as f:
    f.write("count,total\\n%d,%g\\n" % (len(values), sum(values)))
print(json.dumps({"rows": len(values), "total": sum(values)}))
`;

/** Leaves whatever the payload asks for under /sandbox/out, then prints. */
const HOSTILE_OUTPUTS = `import json, os, sys
args = json.loads(sys.argv[1])
out = "/sandbox/out"
kind = args["kind"]
if kind == "links":
    os.symlink(args["host_file"], out + "/shadow")
    os.symlink(args["store"], out + "/store")
    os.symlink(".", out + "/loop")
    os.makedirs(out + "/dir")
    os.symlink("..", out + "/dir/up")
    os.mkfifo(out + "/fifo")
    with open(out + "/real.txt", "w") as f:
        f.write("real")
    try:
        os.link("/sandbox/skill.py", out + "/hard")
        print("hard link made")
    except OSError as e:
        print("hard link refused:", e.errno, file=sys.stderr)
    os.link(out + "/real.txt", out + "/real-again.txt")
elif kind == "many":
    for i in range(10000):
        with open("%s/f%05d.txt" % (out, i), "w") as f:
            f.write(str(i))
elif kind == "names":
    for name in ["new\\nline.txt", "..dots..", "tab\\there", "ok.txt"]:
        with open(out + "/" + name, "w") as f:
            f.write(name)
elif kind == "huge":
    with open(out + "/huge.bin", "wb") as f:
        chunk = b"x" * (1 << 20)
        for _ in range(1024):
            f.write(chunk)
elif kind == "fill":
    chunk = b"x" * (1 << 20)
    for i in range(128):
        with open("%s/part%03d.bin" % (out, i), "wb") as f:
            for _ in range(8):
                f.write(chunk)
print(json.dumps({"kind": kind}))
`;

/** Writes an output file, then sleeps before reading its own input: a wipe meanwhile cuts it off. */
const WRITES_THEN_SLEEPS = `import json, time
with open("/sandbox/out/partial.txt", "w") as f:
    f.write("half")
time.sleep(5)
print(json.dumps({"input": open("/sandbox/in/x.txt").read()}))
`;

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");
const file = (filePath: string, content: string | Buffer): InputFile => ({ path: filePath, content: Buffer.from(content) });

describe("files in, files out", () => {
  let engine: TestEngine;

  beforeAll(async () => {
    engine = await startTestEngine();
    for (const [name, code] of [
      ["csv_chart", CHART_SKILL],
      ["hostile_outputs", HOSTILE_OUTPUTS],
      ["writes_then_sleeps", WRITES_THEN_SLEEPS],
    ] as const) {
      const registered = await engine.client.register({
        name,
        code,
        testPayload: name === "hostile_outputs" ? '{"kind": "none"}' : name === "csv_chart" ? '{"csv": "t.csv"}' : "{}",
        testFiles: name === "hostile_outputs" ? [] : [file(name === "csv_chart" ? "t.csv" : "x.txt", "value\n1\n")],
      });
      expect(registered.test?.success, JSON.stringify(registered.test)).toBe(true);
    }
  }, 120_000);
  afterAll(async () => {
    await engine?.dispose();
  });

  const invoke = (name: string, payload: object, files: InputFile[] = []): Promise<InvokeSkillResponse> =>
    engine.client.call(engine.client.raw.invokeSkill, {
      name,
      payload: JSON.stringify(payload),
      payloadJson: undefined,
      routeId: "",
      files,
    });

  it("turns an input CSV into a chart and a summary; bytes, sizes and digests match", async () => {
    const csv = "label,value\na,10\nb,40\nc,25\n";
    const response = await invoke("csv_chart", { csv: "data/values.csv" }, [file("data/values.csv", csv)]);
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(JSON.parse(response.result?.stdout ?? "")).toEqual({ rows: 3, total: 75 });
    const byPath = new Map(response.files.map((f) => [f.path, f]));
    expect([...byPath.keys()].sort()).toEqual(["chart.svg", "report/summary.csv"]);
    const chart = byPath.get("chart.svg");
    expect(chart?.mediaType).toBe("image/svg+xml");
    expect(Buffer.from(chart?.content ?? []).toString()).toContain('<rect x="20" y="60" width="18" height="40"/>');
    const summary = byPath.get("report/summary.csv");
    expect(Buffer.from(summary?.content ?? []).toString()).toBe("count,total\n3,75\n");
    for (const returned of response.files) {
      expect(returned.truncated).toBe(false);
      expect(returned.sizeBytes).toBe(returned.content.length);
      expect(returned.sha256).toBe(sha256(returned.content));
    }
    expect(response.warnings).toEqual([]);
    await runsCleanedUp(engine);
  });

  it("hands back no link, FIFO or loop, reads nothing on the host through them, and says so", async () => {
    const sentinel = path.join(engine.home, "sentinel.txt");
    await writeFile(sentinel, "host secret");
    // The host file's name travels in the payload: the content guard refuses code that names it.
    const response = await invoke("hostile_outputs", { kind: "links", store: sentinel, host_file: "/etc/shadow" });
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    // The link into the sandbox's own read-only files is refused by the kernel (another file system).
    expect(response.result?.stderr).toMatch(/hard link refused: 18/);
    const paths = response.files.map((f) => f.path).sort();
    expect(paths).toEqual(["real-again.txt", "real.txt"]);
    for (const returned of response.files) expect(Buffer.from(returned.content).toString()).toBe("real");
    for (const skipped of ["shadow", "store", "loop", "dir/up", "fifo"]) {
      expect(response.warnings.some((w) => w.startsWith(`skipped ${skipped} under /sandbox/out`))).toBe(true);
    }
    expect(response.warnings.find((w) => w.startsWith("skipped fifo"))).toMatch(/a fifo, not a regular file/);
    expect(await readFile(sentinel, "utf8")).toBe("host secret");
    await runsCleanedUp(engine);
  });

  it("returns at most the file limit of 10,000 tiny files and counts the rest", async () => {
    const response = await invoke("hostile_outputs", { kind: "many" });
    expect(response.result?.success, JSON.stringify(response.result)).toBe(true);
    expect(response.files).toHaveLength(256);
    expect(response.files[0]?.path).toBe("f00000.txt");
    expect(response.warnings).toContain("9744 more output files were not returned: at most 256 come back (SKILL_ENGINE_OUTPUT_FILES_MAX)");
  });

  it("skips names with control characters and keeps ordinary ones with dots", async () => {
    const response = await invoke("hostile_outputs", { kind: "names" });
    expect(response.files.map((f) => f.path).sort()).toEqual(["..dots..", "ok.txt"]);
    expect(response.warnings.filter((w) => w.includes("holds a control character"))).toHaveLength(2);
  });

  it("a skill that fills its output space fails with a clear summary, its own failure, and nothing reaches the host disk", async () => {
    const before = (await engine.client.get("hostile_outputs")).skill?.failureCount ?? 0;
    // One file of 1 GiB stops at the file-size limit; 1 GiB in files of 8 MiB at the output space's size.
    const huge = await invoke("hostile_outputs", { kind: "huge" });
    expect(huge.result?.success).toBe(false);
    expect(huge.result?.errorSummary).toBe("line 32: OSError: [Errno 27] File too large");
    const fill = await invoke("hostile_outputs", { kind: "fill" });
    expect(fill.result?.success).toBe(false);
    expect(fill.result?.errorSummary).toBe(
      "wrote more than 64 MiB under /sandbox/out (the output space's size, SKILL_ENGINE_OUTPUT_SPACE_MB)",
    );
    // What fitted comes back, within the inline limit of 32 MiB.
    expect(fill.files.reduce((sum, f) => sum + f.content.length, 0)).toBe(32 * 1024 * 1024);
    expect((await engine.client.get("hostile_outputs")).skill?.failureCount).toBe(before + 2);
    // The service is fine and the skill still runs.
    expect((await invoke("hostile_outputs", { kind: "none" })).result?.success).toBe(true);
    await runsCleanedUp(engine);
  });

  it("refuses bad input files with INVALID_ARGUMENT naming the file and the rule, and runs nothing", async () => {
    const cases: [InputFile[], RegExp][] = [
      [[file("../escape.txt", "x")], /files\[0\] \("\.\.\/escape\.txt"\): a path may not contain '\.' or '\.\.' segments/],
      [[file("/etc/passwd", "x")], /files\[0\] \("\/etc\/passwd"\): a path must be relative/],
      [[file("", "x")], /files\[0\] \(""\): a path is required/],
      [[file("a//b", "x")], /a path may not have empty segments/],
      [[file("bad\nname", "x")], /a path may not contain control characters/],
      [[file("a.txt", "1"), file("a.txt", "2")], /files\[1\] \("a\.txt"\): the same path as files\[0\]/],
      [[file("a", "1"), file("a/b", "2")], /files\[1\] \("a\/b"\): its directory a is the file files\[0\]/],
      [Array.from({ length: 65 }, (_, i) => file(`f${i}`, "x")), /files: 65 files, more than the 64 a run may take/],
      [[file("big.bin", Buffer.alloc(16 * 1024 * 1024 + 1))], /more than the 16777216 a run may take together/],
    ];
    for (const [files, message] of cases) {
      const error = await rpcError(invoke("csv_chart", { csv: "t.csv" }, files));
      expect(error.code, String(message)).toBe(status.INVALID_ARGUMENT);
      expect(error.details).toMatch(message);
    }
    const { skill } = await engine.client.get("csv_chart");
    expect(skill?.usageCount).toBe(1);
  });

  it("a wipe during a run that writes files answers UNAVAILABLE, with nothing half-returned", async () => {
    const { call, runId } = await whileItsContainerRuns(engine.instanceTag, () =>
      invoke("writes_then_sleeps", {}, [file("x.txt", "input")]),
    );
    await rm(path.join(engine.sandboxDir, "runs", runId), { recursive: true, force: true });
    const error = await rpcError(call);
    expect(error.code).toBe(status.UNAVAILABLE);
    expect(error.details).toMatch(/sandbox directory was wiped/);
    expect((await engine.client.get("writes_then_sleeps")).skill?.failureCount).toBe(0);
    expect(await readdir(path.join(engine.sandboxDir, "runs")).catch(() => [])).not.toContain(runId);
  });
});
