/** Inputs needed to explain a run's outcome in one line. */
export interface RunOutcome {
  readonly exitCode: number;
  readonly stdout: string;
  /** The end of stderr (kept even when stderr itself was truncated). */
  readonly stderrTail: string;
  readonly timedOut: boolean;
  readonly oomKilled: boolean;
  readonly timeoutMs: number;
  readonly memoryBytes: number;
}

const MAX_SUMMARY_LENGTH = 300;

/**
 * The cause of a run that exited 0 with nothing on stdout. It is what code shaped like a function
 * (`def run(a, b): return a + b`, never called) gets, so it says what a skill must do instead
 * (docs/skill-lifecycle.md#the-skill-contract).
 */
export const NOTHING_PRINTED =
  "exited 0 but printed nothing: print the result to stdout (a skill receives its payload as JSON in sys.argv[1]; see docs/skill-lifecycle.md#the-skill-contract)";
const SIGNAL_NAMES: Readonly<Record<number, string>> = {
  6: "SIGABRT",
  9: "SIGKILL",
  11: "SIGSEGV",
  15: "SIGTERM",
};

/** The success rule (docs/skill-lifecycle.md#success): exit code 0 and something printed. Whitespace alone is nothing. */
export function isSuccessfulRun(exitCode: number, stdout: string): boolean {
  return exitCode === 0 && stdout.trim().length > 0;
}

/**
 * One line saying why a run failed (empty when it succeeded): the timeout, the OOM kill, the
 * empty output, or the exception line of the last Python traceback, e.g.
 * `ValueError: invalid literal for int() with base 10: 'x'`.
 */
export function summarizeRun(outcome: RunOutcome): string {
  if (outcome.timedOut) return `timed out after ${outcome.timeoutMs} ms`;
  if (isSuccessfulRun(outcome.exitCode, outcome.stdout)) return "";
  if (outcome.oomKilled) {
    return `killed: out of memory (limit ${Math.round(outcome.memoryBytes / (1024 * 1024))} MiB)`;
  }
  if (outcome.exitCode === 0) return NOTHING_PRINTED;
  const fromStderr = lastExceptionLine(outcome.stderrTail);
  if (fromStderr) return clip(fromStderr);
  if (outcome.exitCode > 128 && outcome.exitCode - 128 in SIGNAL_NAMES) {
    return `killed by ${SIGNAL_NAMES[outcome.exitCode - 128]}`;
  }
  return `exited with code ${outcome.exitCode}`;
}

/** A frame line of a Python traceback: `  File "/sandbox/skill.py", line 7, in items_of`. */
const FRAME_LINE = /^ {2}File "(.+)", line (\d+)(?:, in .*)?$/;

/**
 * The exception line of the last traceback in `stderr`: the first unindented line after the
 * frames of the last "Traceback (most recent call last):" block, led by the skill's own line
 * (`line 7: KeyError: 'items'`, docs/skill-lifecycle.md#success). The entry script prints a failed
 * skill's traceback from the skill's own frames on (container-entry.ts), so the block's first frame
 * is in the skill's own file and the line is that of the deepest frame in the same file; a block
 * whose first frame is no file (`<string>`, `<frozen …>`) gives none. Without a traceback, the last
 * non-empty line.
 */
export function lastExceptionLine(stderr: string): string {
  const lines = stderr.split(/\r?\n/);
  let tracebackStart = -1;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (lines[i]?.startsWith("Traceback (most recent call last):")) {
      tracebackStart = i;
      break;
    }
  }
  if (tracebackStart >= 0) {
    let ownFile: string | undefined;
    let ownLine: string | undefined;
    for (let i = tracebackStart + 1; i < lines.length; i++) {
      const line = lines[i] ?? "";
      const frame = FRAME_LINE.exec(line);
      if (frame) {
        const file = frame[1] ?? "";
        ownFile ??= file;
        if (file === ownFile && !file.startsWith("<")) ownLine = frame[2];
        continue;
      }
      if (line.trim() !== "" && !/^\s/.test(line)) return ownLine === undefined ? line.trim() : `line ${ownLine}: ${line.trim()}`;
    }
  }
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]?.trim() ?? "";
    if (line !== "") return line;
  }
  return "";
}

function clip(line: string): string {
  return line.length <= MAX_SUMMARY_LENGTH ? line : `${line.slice(0, MAX_SUMMARY_LENGTH - 1)}…`;
}
