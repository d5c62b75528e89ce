import { afterAll, describe, expect, it } from "vitest";
import { InternalError } from "../../errors/index.js";
import { CPythonSyntaxChecker, PARSER_CRASHED_MESSAGE, type SyntaxVerdict } from "./python-syntax.js";
import { eventually } from "../../../test/support/poll.js";
import { requireDebianPython } from "../../../test/support/require-debian-python.js";

const SKILL = `import json
import sys


def main() -> None:
    """Echo the payload back with its keys sorted."""
    payload = json.loads(sys.argv[1])
    print(json.dumps(payload, sort_keys=True))


if __name__ == "__main__":
    main()
`;

/** A typical 2-5 KB skill: helpers, a docstring, string handling, a main. */
function typicalSkill(seed: number): string {
  const helpers = Array.from(
    { length: 12 },
    (_, i) => `
def helper_${i}(items: list[dict], key: str = "name") -> list[str]:
    """Return the ${i}th projection of items, skipping blanks."""
    out = []
    for item in items:
        value = str(item.get(key, "")).strip()
        if value and len(value) > ${i % 5}:
            out.append(f"{value}-{${i} + ${seed}}")
    return sorted(set(out))
`,
  ).join("");
  return `import json\nimport sys\n${helpers}\n${SKILL.slice(SKILL.indexOf("def main"))}`;
}

async function waitFor(condition: () => boolean, what: string): Promise<void> {
  await eventually(what, () => (condition() ? true : undefined), { intervalMs: 5 });
}

function failure(verdict: SyntaxVerdict): Extract<SyntaxVerdict, { ok: false }> {
  if (verdict.ok) throw new Error("expected a syntax error");
  return verdict;
}

/** Enough statements that parsing takes about a second: room to act while it runs. */
const SLOW_INPUT = "x = 1\n".repeat(100_000);

requireDebianPython();

describe("CPythonSyntaxChecker", () => {
  const checker = new CPythonSyntaxChecker();
  afterAll(() => checker.close());

  it("accepts valid code and says whether it does anything", async () => {
    expect(await checker.check(SKILL)).toMatchObject({ ok: true, inert: false });
    expect(await checker.check('é = "ü"\nprint(é)\n')).toMatchObject({ ok: true, inert: false });
    expect(await checker.check("# only a comment\n")).toMatchObject({ ok: true, inert: true });
    expect(await checker.check('"""Only a docstring."""\n')).toMatchObject({ ok: true, inert: true });
    expect(await checker.check("")).toMatchObject({ ok: true, inert: true });
  });

  it("reports the parser's message, line and column", async () => {
    expect(await checker.check("import os\n\nx = = 1\nprint(x)\n")).toEqual({
      ok: false,
      message: "invalid syntax",
      line: 3,
      column: 5,
      atEndOfInput: false,
    });
    // Columns count code points, as CPython reports them.
    expect(failure(await checker.check('s = "éé" +* 1\n')).column).toBe(11);
    expect(failure(await checker.check("def f():\nreturn 1\n")).message).toMatch(/expected an indented block/);
  });

  it("flags input that ended too early", async () => {
    const truncated = {
      tripleQuoted: 'def f():\n    """Doc\n    more doc\n',
      bracket: "x = foo(1,\n      2,\n",
      operator: "x = 1 +",
      blockHeader: "for i in range(3):\n",
      continuation: "x = 1 + \\",
      stringOnLastLine: 'x = 1\ny = "abc',
    };
    for (const [name, code] of Object.entries(truncated)) {
      expect(failure(await checker.check(code)).atEndOfInput, name).toBe(true);
    }
    expect(failure(await checker.check('def f():\n    """Doc\n')).message).toMatch(/unterminated triple-quoted string/);
    expect(failure(await checker.check('def f():\n    """Doc\n')).line).toBe(2);
    const complete = ["x = = 1\ny = 2\n", 'y = "abc\nx = 1\n', "x = 1 $\n", "print('a') foo\n"];
    for (const code of complete) expect(failure(await checker.check(code)).atEndOfInput, code).toBe(false);
  });

  it("answers many concurrent callers, each with its own verdict", async () => {
    const inputs = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? `x = ${i}\n` : `${"pass\n".repeat(i)}y = = ${i}\n`));
    const verdicts = await Promise.all(inputs.map((code) => checker.check(code)));
    verdicts.forEach((verdict, i) => {
      if (i % 3 === 0) expect(verdict.ok).toBe(true);
      else expect(failure(verdict).line).toBe(i + 1);
    });
  });

  it("survives pathological inputs and keeps working without a restart", async () => {
    await checker.check("x = 1\n");
    const pid = checker.pid;
    const nested = failure(await checker.check("(".repeat(1_000) + ")".repeat(1_000)));
    expect(nested.message).toMatch(/too many nested parentheses/);
    const unary = failure(await checker.check("-".repeat(200_000) + "1"));
    expect(unary.message).toMatch(/too complex|nested too deeply/);
    const attributes = failure(await checker.check("x" + ".a".repeat(200_000)));
    expect(attributes.message).toMatch(/too complex|nested too deeply/);
    const nul = failure(await checker.check("x = 1\ny = 2\0\n"));
    expect(nul).toMatchObject({ message: expect.stringMatching(/null bytes/), line: 2, column: 6 });
    const big = typicalSkill(1).repeat(40);
    expect(big.length).toBeGreaterThan(100 * 1024);
    expect(await checker.check(big)).toMatchObject({ ok: true, inert: false });
    expect(await checker.check(SKILL)).toMatchObject({ ok: true, inert: false });
    expect(checker.pid).toBe(pid);
  });

  it("restarts the parser when it was killed between checks", async () => {
    await checker.check(SKILL);
    const pid = checker.pid;
    expect(pid).toBeTypeOf("number");
    process.kill(pid as number, "SIGKILL");
    await waitFor(() => checker.pid === undefined, "the parser to be reaped");
    expect(await checker.check(SKILL)).toMatchObject({ ok: true, inert: false });
    expect(checker.pid).not.toBe(pid);
  });

  it("reports a crash during a check as a verdict and restarts", async () => {
    await checker.check(SKILL);
    const pid = checker.pid as number;
    const pending = checker.check(SLOW_INPUT);
    await waitFor(() => checker.checking, "the slow input to be handed to the parser");
    process.kill(pid, "SIGSEGV");
    expect(await pending).toEqual({ ok: false, message: PARSER_CRASHED_MESSAGE, line: 0, column: 0, atEndOfInput: false });
    expect(await checker.check("x = = 1\n")).toMatchObject({ ok: false, line: 1 });
    expect(checker.pid).not.toBe(pid);
  });

  it("kills and replaces a parser that exceeds the timeout, and checks the code again on the fresh one before blaming it", async () => {
    // Generous for a normal skill on a loaded machine (a replacement parser starts within it too);
    // the stuck parser never answers at all. A stuck parser is not the code's fault: the fresh
    // parser's verdict is the answer.
    const impatient = new CPythonSyntaxChecker({ timeoutMs: 10_000 });
    try {
      await impatient.check(SKILL);
      const pid = impatient.pid as number;
      process.kill(pid, "SIGSTOP");
      const stuck = impatient.check(SKILL);
      const queuedBehind = impatient.check(SKILL);
      expect(await stuck).toMatchObject({ ok: true, inert: false });
      expect(await queuedBehind).toMatchObject({ ok: true, inert: false });
      expect(await impatient.check(SKILL)).toMatchObject({ ok: true, inert: false });
      expect(impatient.pid).not.toBe(pid);
    } finally {
      await impatient.close();
    }
  });

  it("blames the code only when it times out twice, the second time on a fresh parser with twice the time", async () => {
    const impatient = new CPythonSyntaxChecker({ timeoutMs: 1 });
    try {
      // No parser answers a large input within 1 ms (nor 2 ms): both attempts time out.
      expect(await impatient.check(SLOW_INPUT)).toEqual({
        ok: false,
        message: "the Python parser did not finish within 1 ms, nor within 2 ms on a fresh parser",
        line: 0,
        column: 0,
        atEndOfInput: false,
      });
    } finally {
      await impatient.close();
    }
  });

  it("starts lazily and kills the parser on close", async () => {
    const short = new CPythonSyntaxChecker();
    expect(short.pid).toBeUndefined();
    await short.check(SKILL);
    const pid = short.pid as number;
    const pending = short.check(SLOW_INPUT);
    await short.close();
    await expect(pending).rejects.toBeInstanceOf(InternalError);
    expect(() => process.kill(pid, 0)).toThrow();
    await expect(short.check(SKILL)).rejects.toThrow(/closed/);
    await short.close();
  });

  it("rejects, rather than answering, when the interpreter cannot start", async () => {
    const broken = new CPythonSyntaxChecker({ pythonPath: "/nonexistent/python3" });
    await expect(broken.check(SKILL)).rejects.toThrow(/could not start the Python syntax checker/);
    await broken.close();
  });

  it("parses typical skills (and prints the cost; speed goals live in npm run bench)", async () => {
    const skills = Array.from({ length: 200 }, (_, i) => typicalSkill(i));
    const bytes = skills.map((s) => Buffer.byteLength(s)).sort((a, b) => a - b);
    const timings: number[] = [];
    for (const skill of skills) {
      const started = performance.now();
      expect((await checker.check(skill)).ok).toBe(true);
      timings.push(performance.now() - started);
    }
    timings.sort((a, b) => a - b);
    const median = timings[timings.length >> 1] as number;
    console.log(
      `syntax check of a ${bytes[0]}-${bytes[bytes.length - 1]} byte skill: median ${median.toFixed(2)} ms, ` +
        `p90 ${(timings[Math.floor(timings.length * 0.9)] as number).toFixed(2)} ms over ${timings.length} checks`,
    );
  });
});
