import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { skillctl } from "./support/skillctl.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

/** Reads a CSV from /sandbox/in, writes a chart and a summary under /sandbox/out, and on request a big file. */
const CSV_REPORT = `import csv, json, os, sys
args = json.loads(sys.argv[1])
with open("/sandbox/in/" + args["csv"]) as f:
    values = [float(r["value"]) for r in csv.DictReader(f)]
os.makedirs("/sandbox/out/report", exist_ok=True)
with open("/sandbox/out/chart.svg", "w") as f:
    f.write('<svg xmlns="http://www.w3.org/2000/svg">%s</svg>' % "".join('<rect height="%g"/>' % v for v in values))
with open("/sandbox/out/report/summary.csv", "w") as f:
    f.write("count,total\\n%d,%g\\n" % (len(values), sum(values)))
if args.get("big_mib"):
    with open("/sandbox/out/big.bin", "wb") as f:
        f.write(bytes(range(256)) * 4096 * args["big_mib"])
print(json.dumps({"rows": len(values), "total": sum(values)}))
`;
const CSV = "label,value\na,10\nb,40\nc,25\n";
const CHART = '<svg xmlns="http://www.w3.org/2000/svg"><rect height="10"/><rect height="40"/><rect height="25"/></svg>';

describe("skillctl sends files to a run and writes the returned ones (real server, engine and CLI process)", () => {
  let engine: TestEngine;
  let work: string;
  let port: number;
  let csvFile: string;

  beforeAll(async () => {
    engine = await startTestEngine();
    port = engine.app.port;
    work = await mkdtemp(path.join(os.tmpdir(), "skillctl-files-"));
    csvFile = path.join(work, "values.csv");
    await writeFile(csvFile, CSV);
    await writeFile(path.join(work, "csv_report.py"), CSV_REPORT);
  }, 60_000);
  afterAll(async () => {
    await engine?.dispose();
    await rm(work, { recursive: true, force: true });
  });

  const invokeInto = (out: string, ...more: string[]) =>
    skillctl(port, "invoke", "csv_report", '{"csv": "data/values.csv"}', "--file", `data/values.csv=${csvFile}`, "--out", out, ...more);

  it("registers with --test-file and lists the files the test run returned", async () => {
    const run = await skillctl(
      port,
      "register",
      path.join(work, "csv_report.py"),
      "--name",
      "csv_report",
      "--description",
      "Turns a CSV of values into an SVG chart and a summary CSV.",
      "--test-payload",
      '{"csv": "t.csv"}',
      "--test-file",
      `t.csv=${csvFile}`,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("registered csv_report v1");
    expect(run.stdout).toMatch(/^returned chart\.svg +\d+ B +image\/svg\+xml$/m);
    expect(run.stdout).toMatch(/^returned report\/summary\.csv +17 B +text\/csv$/m);
  }, 120_000);

  it("invoke --file sends a local file and --out writes every returned file at its path", async () => {
    const out = path.join(work, "out");
    const run = await invokeInto(out);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ rows: 3, total: 75 });
    expect(await readFile(path.join(out, "chart.svg"), "utf8")).toBe(CHART);
    expect(await readFile(path.join(out, "report", "summary.csv"), "utf8")).toBe("count,total\n3,75\n");
    expect(run.stderr).toMatch(new RegExp(`^wrote ${out}/chart\\.svg +${CHART.length} B +image/svg\\+xml$`, "m"));
    expect(run.stderr).toMatch(new RegExp(`^wrote ${out}/report/summary\\.csv +17 B +text/csv$`, "m"));
    // Without --out, the files are listed (path and size), not written; a bare --file goes under its base name.
    const bare = await skillctl(port, "invoke", "csv_report", '{"csv": "values.csv"}', "--file", csvFile);
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.stderr).toMatch(/^returned chart\.svg +\d+ B +image\/svg\+xml$/m);
    expect(bare.stderr).toContain("(--out DIR writes the returned files)");
  }, 180_000);

  it("never overwrites a file that exists unless --force, which replaces it", async () => {
    const out = path.join(work, "again");
    await mkdir(out);
    await writeFile(path.join(out, "chart.svg"), "mine");
    const run = await invokeInto(out);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`skillctl: not written: chart.svg: ${out}/chart.svg exists; not overwritten (--force replaces it)`);
    expect(await readFile(path.join(out, "chart.svg"), "utf8")).toBe("mine");
    // The other file had no such problem.
    expect(await readFile(path.join(out, "report", "summary.csv"), "utf8")).toBe("count,total\n3,75\n");
    const forced = await invokeInto(out, "--force");
    expect(forced.code, forced.stderr).toBe(0);
    expect(await readFile(path.join(out, "chart.svg"), "utf8")).toBe(CHART);
  }, 180_000);

  it("follows no link planted in --out: neither a directory link nor a link at a file's place", async () => {
    const out = path.join(work, "planted");
    const elsewhere = path.join(work, "elsewhere");
    await mkdir(out);
    await mkdir(elsewhere);
    const victim = path.join(elsewhere, "victim.txt");
    await writeFile(victim, "untouched");
    await symlink(elsewhere, path.join(out, "report"));
    await symlink(victim, path.join(out, "chart.svg"));
    const run = await invokeInto(out);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`skillctl: not written: report/summary.csv: ${out}/report is a symbolic link; not followed`);
    expect(run.stderr).toContain(`skillctl: not written: chart.svg: ${out}/chart.svg exists`);
    const forced = await invokeInto(out, "--force");
    expect(forced.code).toBe(2);
    expect(forced.stderr).toContain(`${out}/report is a symbolic link; not followed`);
    // --force replaced the link at chart.svg by a file of its own; nothing went through either link.
    expect(await readFile(path.join(out, "chart.svg"), "utf8")).toBe(CHART);
    expect(await readFile(victim, "utf8")).toBe("untouched");
    expect(await readdir(elsewhere)).toEqual(["victim.txt"]);
  }, 180_000);

  it("reads an answer past grpc-js's 4 MiB default: a 12 MiB file comes back whole, and --json says where it went", async () => {
    const out = path.join(work, "big");
    const run = await skillctl(
      port,
      "--json",
      "invoke",
      "csv_report",
      '{"csv": "v.csv", "big_mib": 12}',
      "--file",
      `v.csv=${csvFile}`,
      "--out",
      out,
    );
    expect(run.code, run.stderr).toBe(0);
    const answer = JSON.parse(run.stdout) as { files: Array<{ path: string; sizeBytes: number; sha256: string; writtenTo: string }> };
    const big = answer.files.find((f) => f.path === "big.bin");
    expect(big?.sizeBytes).toBe(12 * 1024 * 1024);
    expect(big?.writtenTo).toBe(path.join(out, "big.bin"));
    const bytes = await readFile(path.join(out, "big.bin"));
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(big?.sha256);
    expect(bytes.length).toBe(12 * 1024 * 1024);
  }, 180_000);
});
