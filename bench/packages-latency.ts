/**
 * npm run bench (packages part; docs/performance.md#skills-with-packages). Starts the real service as
 * its own process, with a wheelhouse this bench makes itself (nothing from outside the machine), and
 * measures in one run:
 * - RegisterSkill of a skill with a new environment (the build included: pip installs its wheel);
 * - RegisterSkill of a skill whose environment exists already (nothing is built), beside
 *   RegisterSkill of a standard-library skill;
 * - warm InvokeSkill of a skill with an environment against the same skill without one (the
 *   baseline, standard library only), alternating, one call every BENCH_PACE_MS: the ratio of their
 *   p50s is the last line (aim: ≤ 1.2);
 * - each environment's size on disk.
 * Counts: BENCH_ENVS (new environments, and registrations reusing one; default 4), BENCH_PACED
 * (invocations of each skill; default 40), BENCH_PACE_MS (default 300).
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { spawnService } from "../test/support/service-process.js";
import { connect, samples } from "../test/support/test-engine.js";
import { writeWheel } from "../test/support/wheelhouse.js";

const ENVS = Number(process.env.BENCH_ENVS ?? 4);
const PACED = Number(process.env.BENCH_PACED ?? 40);
const PACE_MS = Number(process.env.BENCH_PACE_MS ?? 300);
const PAYLOAD = '{"n": 1}';
/** The same skill with and without a package: only the import differs. */
const STDLIB_SKILL = "import json, sys\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'echo': args}))\n";
const packageSkill = (module: string): string =>
  `import json, sys\nimport ${module}\nargs = json.loads(sys.argv[1])\nprint(json.dumps({'echo': args, 'from': ${module}.VALUE}))\n`;
/** Each registration describes itself in its own words, as an agent's do (bench/invoke-latency.ts says why). */
const DESCRIPTIONS = [
  "Convert a temperature from Celsius to Fahrenheit",
  "Count the words in a block of text",
  "Compute compound interest over a number of years",
  "Validate an email address and report what is wrong with it",
  "Parse an ISO 8601 date and return the weekday",
  "Summarise a CSV table: rows, columns and numeric column means",
  "Convert a Roman numeral to an integer",
  "Slugify a title for use in a URL",
  "Compute the great-circle distance between two coordinates",
  "Extract every hashtag from a social media post",
  "Check whether a string is a palindrome, ignoring punctuation",
  "Convert an amount between metric and imperial length units",
];

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

async function timed(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(os.tmpdir(), "skill-engine-bench-packages-"));
  const wheelhouse = path.join(root, "wheels");
  // One small pure-Python package per new environment, each a few modules, as a real helper library is.
  for (let i = 0; i < ENVS; i++) {
    const files: Record<string, string> = { [`benchpkg${i}/__init__.py`]: `from .core import VALUE\n` };
    files[`benchpkg${i}/core.py`] = `VALUE = ${JSON.stringify(`package ${i}`)}\n\ndef double(x):\n    return 2 * x\n`;
    files[`benchpkg${i}/util.py`] = `import json\n\ndef dump(value):\n    return json.dumps(value, sort_keys=True)\n`;
    writeWheel(wheelhouse, { name: `benchpkg${i}`, version: "1.0.0", files });
  }
  const home = path.join(root, "home");
  const service = await spawnService({
    SKILL_ENGINE_HOME: home,
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, "sandbox"),
    SKILL_ENGINE_LOG_LEVEL: "info",
    SKILL_ENGINE_POOL: "on",
    SKILL_ENGINE_WHEELHOUSE: wheelhouse,
  });
  const client = connect(service.port);
  const metricsPort = service.logs.find((entry) => typeof entry.metricsPort === "number")?.metricsPort as number | undefined;
  /** Sandbox runs of one purpose so far, by path (warm, cold), as the service's /metrics counts them. */
  const runPaths = async (purpose: "invoke" | "test"): Promise<{ warm: number; cold: number }> => {
    const counts = { warm: 0, cold: 0 };
    if (metricsPort === undefined) return counts;
    const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    for (const { labels, value } of samples(text, "skill_engine_sandbox_runs_total"))
      if (labels.purpose === purpose && (labels.path === "warm" || labels.path === "cold")) counts[labels.path] += value;
    return counts;
  };
  const since = (before: { warm: number; cold: number }, after: { warm: number; cold: number }) => ({
    warm: after.warm - before.warm,
    cold: after.cold - before.cold,
  });
  const figures: Record<string, unknown> = { date: new Date().toISOString(), envs: ENVS, paced: PACED, cpus: os.cpus().length };
  try {
    await client.register({ name: "echo", description: "Echo the payload back", code: STDLIB_SKILL, testPayload: PAYLOAD });
    await sleep(3_000); // the plain pool fills

    const registerNewEnvironment: number[] = [];
    const registerReusing: number[] = [];
    const registerStdlib: number[] = [];
    const environmentIds: string[] = [];
    let described = 0;
    const description = () => DESCRIPTIONS[described++ % DESCRIPTIONS.length] as string;
    for (let i = 0; i < ENVS; i++) {
      await sleep(PACE_MS);
      let environmentId = "";
      registerNewEnvironment.push(
        await timed(async () => {
          const { skill } = await client.register(
            {
              name: `pkg_new_${i}`,
              description: description(),
              code: packageSkill(`benchpkg${i}`),
              testPayload: PAYLOAD,
              requirements: [`benchpkg${i}==1.0.0`],
            },
            300_000,
          );
          environmentId = skill?.environmentId ?? "";
        }),
      );
      environmentIds.push(environmentId);
    }
    const reuseTestsBefore = await runPaths("test");
    for (let i = 0; i < ENVS; i++) {
      await sleep(PACE_MS);
      registerReusing.push(
        await timed(() =>
          client.register(
            {
              name: `pkg_reuse_${i}`,
              description: description(),
              code: packageSkill("benchpkg0"),
              testPayload: PAYLOAD,
              requirements: ["benchpkg0==1.0.0"],
            },
            300_000,
          ),
        ),
      );
      await sleep(PACE_MS);
      registerStdlib.push(
        await timed(() => client.register({ name: `stdlib_${i}`, description: description(), code: STDLIB_SKILL, testPayload: PAYLOAD })),
      );
    }
    // The test runs of the registrations reusing an environment and of the stdlib ones.
    figures.reuseTestPaths = since(reuseTestsBefore, await runPaths("test"));
    figures.registerNewEnvironment = stats(registerNewEnvironment);
    figures.registerReusingEnvironment = stats(registerReusing);
    figures.registerStdlib = stats(registerStdlib);

    // Warm InvokeSkill, the skill with an environment and the same skill without one alternating,
    // one call every PACE_MS, so both see the same machine.
    await sleep(3_000);
    const invokeOnce = async (name: string): Promise<void> => {
      const { result } = await client.invoke(name, PAYLOAD);
      if (!result?.success) throw new Error(`${name} failed: ${result?.errorSummary}`);
    };
    const before = await runPaths("invoke");
    const invokeEnvironment: number[] = [];
    const invokeStdlib: number[] = [];
    for (let i = 0; i < PACED; i++) {
      // Which goes first alternates, so neither always follows the other's refill.
      for (const kind of i % 2 === 0 ? (["environment", "stdlib"] as const) : (["stdlib", "environment"] as const)) {
        await sleep(PACE_MS);
        if (kind === "environment") invokeEnvironment.push(await timed(() => invokeOnce("pkg_new_0")));
        else invokeStdlib.push(await timed(() => invokeOnce("echo")));
      }
    }
    const after = await runPaths("invoke");
    figures.invokeWarmEnvironment = stats(invokeEnvironment);
    figures.invokeWarmStdlib = stats(invokeStdlib);
    figures.invokeSamplesMs = { environment: invokeEnvironment.map(Math.round), stdlib: invokeStdlib.map(Math.round) };
    figures.invokePaths = since(before, after);

    const sizes = environmentIds.map((id) =>
      Number(
        execFileSync("du", ["-sb", path.join(home, "environments", id)])
          .toString()
          .split("\t")[0],
      ),
    );
    const allEnvironments = Number(
      execFileSync("du", ["-sb", path.join(home, "environments")])
        .toString()
        .split("\t")[0],
    );
    figures.environmentBytes = sizes;
    figures.environmentsDirBytes = allEnvironments;

    const ms = (value: number) => `${value.toFixed(1).padStart(8)} ms`;
    const row = (what: string, s: Stats) => console.log(`${what.padEnd(58)} ${String(s.n).padStart(3)} ${ms(s.p50)} ${ms(s.p95)}`);
    console.log(`\n${"what".padEnd(58)} ${"n".padStart(3)} ${"p50".padStart(11)} ${"p95".padStart(11)}`);
    row("RegisterSkill, new environment (build included)", figures.registerNewEnvironment as Stats);
    row("RegisterSkill, reusing an environment", figures.registerReusingEnvironment as Stats);
    row("RegisterSkill, standard library only (baseline)", figures.registerStdlib as Stats);
    row(`InvokeSkill warm, skill with an environment, paced ${PACE_MS} ms`, figures.invokeWarmEnvironment as Stats);
    row(`InvokeSkill warm, stdlib skill (baseline), paced ${PACE_MS} ms`, figures.invokeWarmStdlib as Stats);
    const paths = figures.invokePaths as { warm: number; cold: number };
    const testPaths = figures.reuseTestPaths as { warm: number; cold: number };
    console.log(
      `warm path: ${paths.warm} of ${paths.warm + paths.cold} invocations; ` +
        `${testPaths.warm} of ${testPaths.warm + testPaths.cold} test runs of the registrations reusing an environment or stdlib`,
    );
    const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
    console.log(`on disk: each environment ${sizes.map(kib).join(", ")}; environments/ in all ${kib(allEnvironments)}`);

    const out = path.join(process.cwd(), "bench", "results");
    await mkdir(out, { recursive: true });
    const file = path.join(out, `packages-${figures.date as string}.json`.replace(/:/g, "-"));
    await writeFile(file, `${JSON.stringify(figures, null, 2)}\n`);
    await writeFile(path.join(out, "packages-latest.json"), `${JSON.stringify(figures, null, 2)}\n`);
    console.log(`figures written to ${path.relative(process.cwd(), file)}`);

    const ratio = (a: number, b: number) => (b > 0 ? (a / b).toFixed(2) : "n/a");
    const newEnv = figures.registerNewEnvironment as Stats;
    const reuse = figures.registerReusingEnvironment as Stats;
    const stdlibReg = figures.registerStdlib as Stats;
    console.log(
      `RegisterSkill p50: new environment / reusing one = ${ratio(newEnv.p50, reuse.p50)}; reusing one / stdlib = ${ratio(reuse.p50, stdlibReg.p50)}`,
    );
    const env = figures.invokeWarmEnvironment as Stats;
    const stdlib = figures.invokeWarmStdlib as Stats;
    console.log(`warm InvokeSkill p50, with an environment / stdlib = ${ratio(env.p50, stdlib.p50)} (aim ≤ 1.2)`);
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
