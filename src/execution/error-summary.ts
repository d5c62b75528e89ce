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
  if (outcome.exitCode === 0) return "exited 0 but printed nothing";
  const fromStderr = lastExceptionLine(outcome.stderrTail);
  if (fromStderr) return clip(fromStderr);
  if (outcome.exitCode > 128 && outcome.exitCode - 128 in SIGNAL_NAMES) {
    return `killed by ${SIGNAL_NAMES[outcome.exitCode - 128]}`;
  }
  return `exited with code ${outcome.exitCode}`;
}

/**
 * The exception line of the last traceback in `stderr`: the first unindented line after the
 * frames of the last "Traceback (most recent call last):" block. Without a traceback, the last
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
    for (let i = tracebackStart + 1; i < lines.length; i++) {
      const line = lines[i] ?? "";
      if (line.trim() !== "" && !/^\s/.test(line)) return line.trim();
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
