/**
 * npm run bench (files part; docs/performance.md#files-in-and-out). Starts the real service as its own
 * process, with the warm pool on, and measures in one run warm InvokeSkill of:
 * - a skill that writes a 1 MiB file under /sandbox/out and prints a line (the file comes back inline);
 * - a skill that takes a 1 MiB input file under /sandbox/in and prints its digest;
 * - the same skill making the same 1 MiB but writing it under /tmp, so nothing comes back (the skill's own
 *   work without the hand-back: what returning the file costs is the difference to the first);
 * - the same skill printing a line only (the baseline: stdout, no file either way);
 * alternating, one call every BENCH_PACE_MS, BENCH_PACED times each. The ratios of their p50s are the
 * last lines (aim for the output file: ≤ 1.3). Every returned file is checked against its SHA-256.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import type { InputFile } from "../src/gen/skillengine/v1/execution.js";
import { spawnService } from "../test/support/service-process.js";
import { connect } from "../test/support/test-engine.js";

const PACED = Number(process.env.BENCH_PACED ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);
const MiB = 1024 * 1024;
type Kind = "out" | "tmp" | "in" | "none";

/** One skill for all four kinds, so only the files differ. */
const SKILL = `import hashlib, json, os, sys
args = json.loads(sys.argv[1])
kind = args["kind"]
if kind in ("out", "tmp"):
    with open("/sandbox/out/data.bin" if kind == "out" else "/tmp/data.bin", "wb") as f:
        f.write(os.urandom(${MiB}))
    print(json.dumps({"wrote": ${MiB}}))
elif kind == "in":
    with open("/sandbox/in/data.bin", "rb") as f:
        print(json.dumps({"sha256": hashlib.sha256(f.read()).hexdigest()}))
else:
    print(json.dumps({"echo": kind}))
`;

interface Stats {
  n: number;
  p50: number;
  p95: number;
}

function stats(samplesMs: number[]): Stats {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { n: sorted.length, p50: at(0.5), p95: at(0.95) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-files-"));
  const service = await spawnService({
    SKILL_ENGINE_HOME: path.join(root, "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: "on",
  });
  const client = connect(service.port);
  const input: InputFile = { path: "data.bin", content: Buffer.alloc(MiB, 7) };
  const inputDigest = sha256(input.content);
  const figures: Record<string, unknown> = { date: new Date().toISOString(), paced: PACED, paceMs: PACE_MS, cpus: os.cpus().length };
  try {
    await client.register({ name: "files_bench", description: "Write, read or skip a file", code: SKILL, testPayload: '{"kind": "none"}' });
    await sleep(3_000); // the pool fills

    const invokeOnce = async (kind: Kind): Promise<number> => {
      const files = kind === "in" ? [input] : [];
      const started = performance.now();
      const response = await client.call(client.raw.invokeSkill, {
        name: "files_bench",
        payload: JSON.stringify({ kind }),
        payloadJson: undefined,
        routeId: "",
        files,
      });
      const elapsed = performance.now() - started;
      if (!response.result?.success) throw new Error(`${kind} failed: ${response.result?.errorSummary}`);
      if (kind === "out") {
        const [file] = response.files;
        if (!file || file.content.length !== MiB || sha256(file.content) !== file.sha256) throw new Error("the 1 MiB file came back wrong");
      }
      if (kind === "in" && (JSON.parse(response.result.stdout) as { sha256?: string }).sha256 !== inputDigest) {
        throw new Error("the input file arrived wrong");
      }
      return elapsed;
    };
    const samples: Record<Kind, number[]> = { out: [], tmp: [], in: [], none: [] };
    const orders = [
      ["out", "tmp", "in", "none"],
      ["none", "out", "tmp", "in"],
      ["in", "none", "out", "tmp"],
      ["tmp", "in", "none", "out"],
    ] as const;
    for (let i = 0; i < PACED; i++) {
      // Which goes first rotates, so none always follows another's refill.
      for (const kind of orders[i % orders.length] ?? orders[0]) {
        await sleep(PACE_MS);
        samples[kind].push(await invokeOnce(kind));
      }
    }
    figures.invokeWarmOutputFile = stats(samples.out);
    figures.invokeWarmSameWorkNoFile = stats(samples.tmp);
    figures.invokeWarmInputFile = stats(samples.in);
    figures.invokeWarmStdoutOnly = stats(samples.none);
    figures.samplesMs = {
      out: samples.out.map(Math.round),
      tmp: samples.tmp.map(Math.round),
      in: samples.in.map(Math.round),
      none: samples.none.map(Math.round),
    };

    const ms = (value: number) => `${value.toFixed(1).padStart(8)} ms`;
    const row = (what: string, s: Stats) => console.log(`${what.padEnd(58)} ${String(s.n).padStart(3)} ${ms(s.p50)} ${ms(s.p95)}`);
    console.log(`\n${"what".padEnd(58)} ${"n".padStart(3)} ${"p50".padStart(11)} ${"p95".padStart(11)}`);
    row(`InvokeSkill warm, returns a 1 MiB file, paced ${PACE_MS} ms`, figures.invokeWarmOutputFile as Stats);
    row(`InvokeSkill warm, 1 MiB to /tmp, none back, paced ${PACE_MS} ms`, figures.invokeWarmSameWorkNoFile as Stats);
    row(`InvokeSkill warm, takes a 1 MiB file, paced ${PACE_MS} ms`, figures.invokeWarmInputFile as Stats);
    row(`InvokeSkill warm, stdout only (baseline), paced ${PACE_MS} ms`, figures.invokeWarmStdoutOnly as Stats);

    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `files-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(out, "files-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), file)}`);
    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a");
    const baseline = (figures.invokeWarmStdoutOnly as Stats).p50;
    console.log(
      `warm InvokeSkill p50, 1 MiB output file / stdout only = ${ratio((figures.invokeWarmOutputFile as Stats).p50, baseline)} (aim ≤ 1.3)`,
    );
    console.log(
      `warm InvokeSkill p50, 1 MiB output file / the same work returning none = ${ratio((figures.invokeWarmOutputFile as Stats).p50, (figures.invokeWarmSameWorkNoFile as Stats).p50)}`,
    );
    console.log(`warm InvokeSkill p50, 1 MiB input file / stdout only = ${ratio((figures.invokeWarmInputFile as Stats).p50, baseline)}`);
  } finally {
    client.close();
    await service.kill("SIGTERM");
    await rm(root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
