/**
 * npm run bench (intake part): the cost of normalization + content guard per skill, over real
 * Python from Debian's corpus, clean and mangled, against a baseline measured in the same run:
 * a fresh `python3` process per parse (what a naive gate would do). Prints figures only.
 */
import { execFileSync } from "node:child_process";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { CPythonSyntaxChecker, DEBIAN_PYTHON, GUARD_RULES, normalizeSkillCode, scanSkillCode } from "../src/control/intake/index.js";
import { ADVERSARIAL_GUARD_INPUTS, fill } from "../test/support/guard-adversarial-inputs.js";

const CORPUS_ROOTS = ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"];
const SAMPLE = Number(process.env.BENCH_INTAKE_SAMPLE ?? 300);
const MAX_BYTES = 32 * 1024;

async function pythonFiles(root: string, found: string[] = []): Promise<string[]> {
  for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    const full = path.join(root, entry.name);
    if (entry.isDirectory()) await pythonFiles(full, found);
    else if (entry.isFile() && entry.name.endsWith(".py")) found.push(full);
  }
  return found;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const p95 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.95)] ?? 0;

async function main(): Promise<void> {
  const files = (await Promise.all(CORPUS_ROOTS.map((root) => pythonFiles(root)))).flat().sort();
  const sample: string[] = [];
  const step = Math.max(1, Math.floor(files.length / SAMPLE));
  for (let i = 0; i < files.length && sample.length < SAMPLE; i += step) {
    const file = files[i] as string;
    if ((await stat(file)).size <= MAX_BYTES) sample.push(await readFile(file, "utf8"));
  }
  const checker = new CPythonSyntaxChecker({ pythonPath: DEBIAN_PYTHON });
  await checker.check("pass\n");
  const clean: number[] = [];
  const fenced: number[] = [];
  const guardOnly: number[] = [];
  try {
    for (const code of sample) {
      // Empty files and packaged files that are not Python 3.11 (templates, Python 2) are not skills.
      if (code.trim() === "" || !(await checker.check(code)).ok) continue;
      let started = performance.now();
      const normalized = await normalizeSkillCode(code, checker);
      scanSkillCode(normalized.code);
      clean.push(performance.now() - started);

      started = performance.now();
      scanSkillCode(code);
      guardOnly.push(performance.now() - started);

      started = performance.now();
      const repaired = await normalizeSkillCode(`Here you go:\n\`\`\`python\n${code}\`\`\`\n`, checker);
      scanSkillCode(repaired.code);
      fenced.push(performance.now() - started);
    }
  } finally {
    await checker.close();
  }

  const spawnPerParse: number[] = [];
  for (const code of sample.slice(0, 40)) {
    const started = performance.now();
    execFileSync(DEBIAN_PYTHON, ["-I", "-S", "-c", "import sys; compile(sys.stdin.read(), '<skill>', 'exec', 1024)"], { input: code });
    spawnPerParse.push(performance.now() - started);
  }

  const rows: Array<[string, number[]]> = [
    ["normalize + guard, clean skill (1 parse)", clean],
    ["normalize + guard, fenced skill (repair search)", fenced],
    ["content guard alone", guardOnly],
    ["baseline: fresh python3 process per parse", spawnPerParse],
  ];
  console.log(`\nintake over ${clean.length} files of Debian's Python corpus (≤ ${MAX_BYTES / 1024} KiB each)`);
  console.log(`${"what".padEnd(50)} ${"median".padStart(9)} ${"p95".padStart(9)}`);
  for (const [label, values] of rows) {
    console.log(`${label.padEnd(50)} ${median(values).toFixed(2).padStart(7)}ms ${p95(values).toFixed(2).padStart(7)}ms`);
  }
  guardOnAdversarialInput(sample);
}

/**
 * The content guard on 100 KB inputs built to make backtracking regexes explode, next to the
 * baseline of benign code of the same size (corpus files concatenated): linear time shows as
 * the same order of magnitude.
 */
function guardOnAdversarialInput(corpus: readonly string[]): void {
  const timeOf = (input: string): number => {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const started = performance.now();
      scanSkillCode(input);
      runs.push(performance.now() - started);
    }
    return median(runs);
  };
  const benign = fill(corpus.join("\n"));
  const adversarial = Object.entries(ADVERSARIAL_GUARD_INPUTS).map(([name, input]) => ({ name, ms: timeOf(input) }));
  adversarial.sort((x, y) => y.ms - x.ms);
  console.log(`\ncontent guard on 100 KiB inputs (median of 5 scans, all ${GUARD_RULES.length} rules)`);
  console.log(`${"baseline: benign corpus code".padEnd(50)} ${timeOf(benign).toFixed(2).padStart(7)}ms`);
  for (const { name, ms } of adversarial.slice(0, 5)) console.log(`${`adversarial: ${name}`.padEnd(50)} ${ms.toFixed(2).padStart(7)}ms`);
  console.log(`(${adversarial.length - 5} more adversarial inputs, each faster)`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
