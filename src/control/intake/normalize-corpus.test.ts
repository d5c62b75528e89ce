import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { normalizeSkillCode } from "./normalize-code.js";
import { CPythonSyntaxChecker, DEBIAN_PYTHON } from "./python-syntax.js";
import { requireDebianPython } from "../../../test/support/require-debian-python.js";

/**
 * Property test over real Python: Debian's standard library and system packages.
 * (a) every file is returned byte-identical; (b) every mangling an LLM tool-call parser commits
 * is undone exactly, on a deterministic sample. Figures are printed for the closing note.
 */

const CORPUS_ROOTS = ["/usr/lib/python3.11", "/usr/lib/python3/dist-packages"];
const MAX_FILE_BYTES = 100 * 1024;
/**
 * Files in the mangling sample; the sample is deterministic (lowest SHA-1 of the path). Part (a)
 * covers every size; the manglings sample files up to 32 KB, well above a typical 2-5 KB skill,
 * to keep the file under a minute on 2 cores.
 */
const SAMPLE_SIZE = 300;
const MAX_SAMPLE_FILE_BYTES = 32 * 1024;
/**
 * Plain `\n` replacement is ambiguous for a file with backslashes of its own: a `\n` in a
 * docstring or comment may have been an escape or a line break. Such files must come back
 * exactly or as the same program (equal AST) this often.
 */
const AMBIGUOUS_RECOVERY_THRESHOLD = 0.9;

interface CorpusFile {
  readonly path: string;
  readonly text: string;
}

interface Mangling {
  readonly name: string;
  readonly apply: (code: string) => string;
  /** Forms of the code that, if they parse, make exact recovery impossible by rule 1. */
  readonly intermediates?: (code: string) => string[];
  /**
   * When recovery is ambiguous by nature (literal `\n` replacement of a file that has
   * backslashes of its own). Such files count against a threshold, not the 100% rule.
   */
  readonly ambiguousFor?: (code: string) => boolean;
}

const escapeHtml = (code: string) =>
  code.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
const escapeMarkup = (code: string) => code.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const fence = (code: string, tag = "python") => "```" + tag + "\n" + code + "```";
const cdata = (code: string) => "<![CDATA[" + code.replaceAll("]]>", "]]]]><![CDATA[>") + "]]>";
const plainNewlines = (code: string) => code.replaceAll("\n", "\\n");
const hasBackslash = (code: string) => code.includes("\\");
const jsonBodyRawQuotes = (code: string) => JSON.stringify(code).slice(1, -1).replaceAll('\\"', '"');

const MANGLINGS: readonly Mangling[] = [
  { name: "fence (python tag)", apply: (x) => fence(x) },
  { name: "fence (no tag)", apply: (x) => fence(x, "") },
  { name: "fence (py tag, prose around)", apply: (x) => `Here is the skill:\n\n${fence(x, "py")}\n\nRun it with a JSON payload.\n` },
  { name: "fence (~~~python3)", apply: (x) => "~~~python3\n" + x + "~~~\n" },
  { name: "CDATA", apply: cdata },
  { name: "CDATA in <parameter>", apply: (x) => `<parameter name="code">${cdata(x)}</parameter>` },
  { name: "<parameter> tag", apply: (x) => `<parameter name="python_code">${x}</parameter>` },
  { name: "HTML entities", apply: escapeHtml },
  { name: "JSON.stringify", apply: (x) => JSON.stringify(x) },
  { name: "JSON string body", apply: (x) => JSON.stringify(x).slice(1, -1) },
  { name: "plain \\n replacement", apply: plainNewlines, ambiguousFor: hasBackslash },
  // A writer that escaped backslashes and line breaks but not the quotes (issue 13's delivery).
  { name: "JSON body, quotes raw", apply: jsonBodyRawQuotes, ambiguousFor: hasBackslash },
  { name: "indented 4 spaces", apply: (x) => x.replace(/^(?=.*\S)/gm, "    ") },
  { name: "fence + entities", apply: (x) => fence(escapeHtml(x)), intermediates: (x) => [escapeHtml(x)] },
  // Only <, > and & escaped (quotes kept): where they sit only in strings and comments, the
  // escaped form parses as it is (issue 13's delivery); the evidence rule decodes it.
  { name: "fence + entities (<>& only)", apply: (x) => fence(escapeMarkup(x)) },
  { name: "CDATA + entities", apply: (x) => cdata(escapeHtml(x)), intermediates: (x) => [escapeHtml(x)] },
  { name: "fence + JSON.stringify", apply: (x) => JSON.stringify(fence(x)) },
  { name: "fence + plain \\n", apply: (x) => plainNewlines(fence(x)), ambiguousFor: hasBackslash },
  { name: "CDATA + fence", apply: (x) => cdata("\n" + fence(x) + "\n") },
  { name: "entities + JSON.stringify", apply: (x) => escapeHtml(JSON.stringify(x)) },
];

function listPythonFiles(root: string): string[] {
  if (!existsSync(root)) return [];
  const entries = readdirSync(root, { recursive: true, encoding: "utf8" });
  return entries.filter((entry) => entry.endsWith(".py")).map((entry) => join(root, entry));
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function readCandidates(): CorpusFile[] {
  const seen = new Set<string>();
  const files: CorpusFile[] = [];
  for (const path of CORPUS_ROOTS.flatMap(listPythonFiles).sort()) {
    const stat = lstatSync(path);
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) continue;
    const bytes = readFileSync(path);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      continue; // not UTF-8
    }
    const digest = createHash("sha1").update(bytes).digest("hex");
    if (seen.has(digest)) continue;
    seen.add(digest);
    files.push({ path, text });
  }
  return files;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function pathRank(path: string): string {
  return createHash("sha1").update(path).digest("hex");
}

requireDebianPython();

describe("normalizeSkillCode over Debian's Python corpus", () => {
  const checker = new CPythonSyntaxChecker();
  const corpus: CorpusFile[] = [];

  beforeAll(async () => {
    const started = performance.now();
    const candidates = readCandidates();
    for (const file of candidates) {
      if ((await checker.check(file.text)).ok) corpus.push(file);
    }
    console.log(
      `corpus: ${corpus.length} parsing UTF-8 files of ≤ ${MAX_FILE_BYTES / 1024} KB (of ${candidates.length} distinct candidates) ` +
        `from ${CORPUS_ROOTS.join(", ")}; read and parsed in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  });

  afterAll(() => checker.close());

  it("has enough files for the property to mean something", () => {
    expect(corpus.length).toBeGreaterThan(500);
  });

  it("returns every valid file byte-identical, with no normalizations", async () => {
    const timings: number[] = [];
    const changed: string[] = [];
    for (const file of corpus) {
      const started = performance.now();
      const result = await normalizeSkillCode(file.text, checker);
      timings.push(performance.now() - started);
      if (result.code !== file.text || result.normalizations.length > 0) changed.push(file.path);
    }
    console.log(`clean files: ${corpus.length} unchanged; median normalization ${median(timings).toFixed(2)} ms`);
    expect(changed).toEqual([]);
  });

  it("undoes every mangling exactly, or the mangling was ambiguous", async () => {
    const sample = [...corpus]
      .filter((file) => file.text.trim() !== "" && Buffer.byteLength(file.text) <= MAX_SAMPLE_FILE_BYTES)
      .sort((a, b) => (pathRank(a.path) < pathRank(b.path) ? -1 : 1))
      .slice(0, SAMPLE_SIZE);
    const lines: string[] = [];
    const problems: string[] = [];
    for (const mangling of MANGLINGS) {
      let tried = 0;
      let recovered = 0;
      let validByAccident = 0;
      const ambiguous = { tried: 0, exact: 0, sameProgram: 0 };
      const timings: number[] = [];
      const misses: string[] = [];
      for (const file of sample) {
        const mangled = mangling.apply(file.text);
        if (mangled === file.text) continue;
        tried++;
        const isAmbiguous = mangling.ambiguousFor?.(file.text) ?? false;
        if (isAmbiguous) ambiguous.tried++;
        const started = performance.now();
        let code: string | undefined;
        let outcome: string;
        try {
          const result = await normalizeSkillCode(mangled, checker);
          code = result.code;
          outcome = `different code (${result.normalizations.join("; ") || "unchanged"})`;
        } catch (error) {
          outcome = `rejected: ${(error as Error).message}`;
        }
        timings.push(performance.now() - started);
        if (code === file.text) {
          recovered++;
          if (isAmbiguous) ambiguous.exact++;
          continue;
        }
        // Rule 1 forbids touching valid code: if the mangled text (or, for a pair, the text
        // with one mangling left) is itself valid Python, exact recovery is impossible.
        let valid = false;
        for (const form of [mangled, ...(mangling.intermediates?.(file.text) ?? [])]) {
          valid ||= (await checker.check(form)).ok;
        }
        if (valid) {
          validByAccident++;
          continue;
        }
        if (isAmbiguous && code !== undefined && sameProgram(file.text, code)) {
          ambiguous.sameProgram++;
          continue;
        }
        misses.push(`${file.path}: ${outcome.slice(0, 200)}`);
        if (!isAmbiguous) problems.push(`${mangling.name}: ${file.path}: ${outcome.slice(0, 300)}`);
      }
      let line = `${mangling.name.padEnd(28)} ${recovered}/${tried} exact (${percent(recovered, tried)})`;
      if (validByAccident > 0) line += `, ${validByAccident} mangled forms valid Python by accident`;
      if (ambiguous.tried > 0) {
        const rescued = ambiguous.exact + ambiguous.sameProgram;
        line +=
          `; files with backslashes of their own: ${ambiguous.exact}/${ambiguous.tried} exact, ` +
          `${ambiguous.sameProgram} more the same program (AST), ${percent(rescued, ambiguous.tried)} in all`;
        if (rescued / ambiguous.tried < AMBIGUOUS_RECOVERY_THRESHOLD) {
          problems.push(`${mangling.name}: only ${percent(rescued, ambiguous.tried)} of the ambiguous files recovered`);
        }
      }
      lines.push(`${line}; median ${median(timings).toFixed(2)} ms`);
      lines.push(...misses.slice(0, 8).map((miss) => `    miss: ${miss}`));
    }
    console.log(`manglings over a sample of ${sample.length} files:\n${lines.join("\n")}`);
    expect(problems).toEqual([]);
  });
});

function percent(part: number, whole: number): string {
  return `${((whole === 0 ? 1 : part / whole) * 100).toFixed(1)}%`;
}

/**
 * Whether two sources are the same program to CPython (equal ASTs): a `\n` escape and a line
 * break inside a triple-quoted string make the same string, so such a recovery is harmless.
 */
function sameProgram(a: string, b: string): boolean {
  const script = [
    "import ast, json, sys",
    "a, b = json.load(sys.stdin)",
    "try:",
    "    same = ast.dump(ast.parse(a)) == ast.dump(ast.parse(b))",
    "except SyntaxError:",
    "    same = False",
    "print('same' if same else 'different')",
  ].join("\n");
  const run = spawnSync(DEBIAN_PYTHON, ["-I", "-S", "-c", script], { input: JSON.stringify([a, b]), encoding: "utf8" });
  return run.stdout.trim() === "same";
}
