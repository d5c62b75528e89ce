import { describe, expect, it } from "vitest";
import { isSuccessfulRun, lastExceptionLine, summarizeRun } from "./error-summary.js";

const base = {
  exitCode: 1,
  stdout: "",
  stderrTail: "",
  timedOut: false,
  oomKilled: false,
  timeoutMs: 5000,
  memoryBytes: 256 * 1024 * 1024,
};

describe("summarizeRun", () => {
  it("takes the exception line of a traceback", () => {
    const stderr = [
      "Traceback (most recent call last):",
      '  File "/sandbox/skill.py", line 3, in <module>',
      "    print(int(args['value']))",
      "ValueError: invalid literal for int() with base 10: 'x'",
      "",
    ].join("\n");
    expect(summarizeRun({ ...base, stderrTail: stderr })).toBe("line 3: ValueError: invalid literal for int() with base 10: 'x'");
  });

  it("leads with the line of the deepest frame in the skill's own file (the block's first frame's file)", () => {
    const stderr = [
      "Traceback (most recent call last):",
      '  File "/sandbox/skill.py", line 7, in <module>',
      "    print(len(items_of(args)))",
      '  File "/sandbox/skill.py", line 4, in items_of',
      '    return args["items"]',
      '  File "/sandbox/helper.py", line 2, in get',
      '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
      "KeyError: 'items'",
    ].join("\n");
    expect(summarizeRun({ ...base, stderrTail: stderr })).toBe("line 4: KeyError: 'items'");
    // A folder skill's entrypoint is its own file as well.
    const folder = ["Traceback (most recent call last):", '  File "/sandbox/skill_dir/main.py", line 3, in <module>', "ValueError: x"];
    expect(summarizeRun({ ...base, stderrTail: folder.join("\n") })).toBe("line 3: ValueError: x");
    // Frames of no file (an unfiltered harness) name no line; neither does a syntax error, which has no traceback.
    const harness = ["Traceback (most recent call last):", '  File "<string>", line 22, in <module>', "KeyError: 'a'"];
    expect(summarizeRun({ ...base, stderrTail: harness.join("\n") })).toBe("KeyError: 'a'");
    const syntax = ['  File "/sandbox/skill.py", line 1', "    def f(:", "          ^", "SyntaxError: invalid syntax"];
    expect(summarizeRun({ ...base, stderrTail: syntax.join("\n") })).toBe("SyntaxError: invalid syntax");
  });

  it("uses the last traceback of a chain and the first line of a multi-line message", () => {
    const stderr = [
      "Traceback (most recent call last):",
      '  File "x.py", line 1, in <module>',
      "KeyError: 'a'",
      "",
      "During handling of the above exception, another exception occurred:",
      "",
      "Traceback (most recent call last):",
      '  File "x.py", line 3, in <module>',
      "RuntimeError: first line",
      "second line",
    ].join("\n");
    expect(summarizeRun({ ...base, stderrTail: stderr })).toBe("line 3: RuntimeError: first line");
  });

  it("names timeouts, OOM kills and empty output", () => {
    expect(summarizeRun({ ...base, exitCode: 137, timedOut: true })).toBe("timed out after 5000 ms");
    expect(summarizeRun({ ...base, exitCode: 137, oomKilled: true })).toBe("killed: out of memory (limit 256 MiB)");
    // Code shaped like a function that nothing calls lands here: the cause points at the contract.
    expect(summarizeRun({ ...base, exitCode: 0, stdout: " \n" })).toBe(
      "exited 0 but printed nothing: print the result to stdout (a skill receives its payload as JSON in sys.argv[1]; see docs/skill-lifecycle.md#the-skill-contract)",
    );
    expect(summarizeRun({ ...base, exitCode: 0, stdout: "ok\n" })).toBe("");
    // A child OOM-killed while the skill itself still succeeded is not the run's failure.
    expect(summarizeRun({ ...base, exitCode: 0, stdout: "ok\n", oomKilled: true })).toBe("");
  });

  it("falls back to the last stderr line, the signal, or the exit code", () => {
    expect(summarizeRun({ ...base, exitCode: 2, stderrTail: "usage: x\nerror: bad flag\n" })).toBe("error: bad flag");
    expect(summarizeRun({ ...base, exitCode: 139 })).toBe("killed by SIGSEGV");
    expect(summarizeRun({ ...base, exitCode: 3 })).toBe("exited with code 3");
  });

  it("keeps the summary to one bounded line", () => {
    const summary = summarizeRun({ ...base, stderrTail: `Traceback (most recent call last):\nValueError: ${"x".repeat(1000)}` });
    expect(summary.length).toBeLessThanOrEqual(300);
    expect(summary).not.toContain("\n");
  });
});

describe("isSuccessfulRun", () => {
  it("needs exit code 0 and something printed", () => {
    expect(isSuccessfulRun(0, "1")).toBe(true);
    expect(isSuccessfulRun(0, "")).toBe(false);
    expect(isSuccessfulRun(1, "output")).toBe(false);
  });
});

describe("lastExceptionLine", () => {
  it("returns the last non-empty line without a traceback", () => {
    expect(lastExceptionLine("a\nb\n\n")).toBe("b");
    expect(lastExceptionLine("")).toBe("");
  });
});
