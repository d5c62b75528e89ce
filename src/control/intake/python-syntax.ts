import { spawn, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { Logger } from "pino";
import { InternalError, errorMessage } from "../../errors/index.js";
import { MAX_LISTED_IMPORTS, PARSER_SCRIPT } from "./parser-script.js";

export { MAX_LISTED_IMPORTS };

/** Debian's own interpreter; a pyenv or venv `python3` first on PATH may be a different build. */
export const DEBIAN_PYTHON = "/usr/bin/python3";

/**
 * What CPython's parser says about a piece of source.
 *
 * On failure, `line` and `column` are 1-based (the column counts code points, as CPython
 * reports it); both are 0 when the parser gave no position: a crash, a timeout, or an input
 * too deeply nested or too large for it (RecursionError, MemoryError).
 *
 * `atEndOfInput` says the input ended too early: the parser reached the end of the input while
 * it still needed more. Precisely, it is true when
 * 1. CPython's own incomplete-input mode (the flag `codeop` uses to decide whether the
 *    interactive prompt needs another line) reports "incomplete input": a bracket,
 *    triple-quoted string or backslash continuation still open, or an indented block still
 *    expected, at the end; or
 * 2. the error position lies strictly after the last non-whitespace character (the parser
 *    wanted another token, e.g. `x = 1 +`); or
 * 3. the error is an unterminated single-quoted string that starts on the last non-blank line
 *    (the string runs to the end of the input).
 * A trailing comment after an incomplete expression hides case 2; that is rare enough in a
 * cut-off stream to accept.
 */
export type SyntaxVerdict =
  | {
      readonly ok: true;
      /**
       * The module does nothing: it has no statements but constant expressions and `pass`
       * (comments, a docstring, a lone string literal). No skill looks like this, but escaped
       * code can: `#!/usr/bin/env python3\nimport sys…` on one line is a comment to Python.
       * Absent means false.
       */
      readonly inert?: boolean;
      /**
       * What the module imports, in line order (docs/packages.md#the-dependency-scan). Absent
       * means none were listed (an older answer, or listing them ran out of memory).
       */
      readonly imports?: readonly ImportedModule[];
    }
  | {
      readonly ok: false;
      readonly message: string;
      readonly line: number;
      readonly column: number;
      readonly atEndOfInput: boolean;
    };

/**
 * One module the code imports, as the parser found it (docs/packages.md#the-dependency-scan):
 * `import a.b` and `from a.b import c` both give `a.b`; relative imports (`from . import x`) are
 * not listed. Each name is listed once, at its first line.
 */
export interface ImportedModule {
  /** The dotted name as written; its first part is the top-level module. */
  readonly module: string;
  /** 1-based line of its first import. */
  readonly line: number;
  /** The top-level module is in the parsing interpreter's `sys.stdlib_module_names` (or is `__future__`). */
  readonly stdlib: boolean;
  /**
   * Every import of it sits in the body of a `try` that catches `ImportError` or
   * `ModuleNotFoundError`: the code has a fallback for its absence.
   */
  readonly optional: boolean;
}

/** Port: checks Python source for syntax errors without ever executing it. */
export interface PythonSyntaxChecker {
  /**
   * Parses `code` as a Python module. Resolves with a verdict for every input, including ones
   * that crash or hang the parser; rejects only when the parser cannot run at all
   * ({@link InternalError}) or the checker was closed.
   */
  check(code: string): Promise<SyntaxVerdict>;
  /** Stops the parser; pending checks reject. Idempotent. */
  close(): Promise<void>;
}

export interface CPythonSyntaxCheckerOptions {
  /**
   * The interpreter that parses. Its grammar is the one skills will run under.
   * @default DEBIAN_PYTHON
   */
  readonly pythonPath?: string;
  /**
   * How long one parse may take before the parser process is killed and restarted.
   * @default 2000
   */
  readonly timeoutMs?: number;
  /**
   * Address-space cap (RLIMIT_AS) of the parser process, so a pathological input fails with
   * MemoryError instead of exhausting the host.
   * @default 536870912 (512 MiB)
   */
  readonly memoryLimitBytes?: number;
  /** How long the interpreter may take to start. @default 10000 */
  readonly startTimeoutMs?: number;
  /** Restarts, crashes and timeouts are logged here. @default no logging */
  readonly logger?: Logger;
}

type ResolvedOptions = Required<Omit<CPythonSyntaxCheckerOptions, "logger">> & { readonly logger: Logger | undefined };

function addDefaults(options: CPythonSyntaxCheckerOptions): ResolvedOptions {
  const resolved = {
    pythonPath: options.pythonPath ?? DEBIAN_PYTHON,
    timeoutMs: options.timeoutMs ?? 2_000,
    memoryLimitBytes: options.memoryLimitBytes ?? 512 * 1024 * 1024,
    startTimeoutMs: options.startTimeoutMs ?? 10_000,
    logger: options.logger,
  };
  for (const key of ["timeoutMs", "memoryLimitBytes", "startTimeoutMs"] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] <= 0) {
      throw new RangeError(`CPythonSyntaxChecker: ${key} must be a positive integer, got ${resolved[key]}`);
    }
  }
  return resolved;
}

/** Answered when the parser process dies while parsing: the input is what killed it. */
export const PARSER_CRASHED_MESSAGE = "the Python parser crashed on this input";

type Outcome =
  | { readonly kind: "answer"; readonly value: unknown }
  | { readonly kind: "exited"; readonly detail: string }
  | { readonly kind: "timeout" };

type ParserChild = ChildProcessByStdio<Writable, Readable, Readable>;

/** One running interpreter and its framed pipe. Knows nothing about restarts. */
class ParserProcess {
  private buffered: Buffer = Buffer.alloc(0);
  private stderrTail = "";
  private waiter: ((outcome: Outcome) => void) | undefined;
  private exitDetail: string | undefined;
  readonly exited: Promise<void>;

  private constructor(private readonly child: ParserChild) {
    this.exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        this.exitDetail ??= signal ? `killed by ${signal}` : `exited with code ${code}`;
        resolve();
        this.settle({ kind: "exited", detail: this.describeExit() });
      });
    });
    child.once("error", (error) => {
      // Spawn failures (ENOENT, EACCES) arrive here, and no "close" may follow.
      this.exitDetail = errorMessage(error);
      this.settle({ kind: "exited", detail: this.describeExit() });
    });
    child.stdin.on("error", () => {
      // EPIPE when the interpreter died mid-write; "close" reports the death.
    });
    child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString("utf8")).slice(-2_000);
    });
    // An idle checker nobody closed must not keep the service alive; a request in flight
    // keeps the event loop busy through its timeout timer.
    for (const handle of [child, child.stdin, child.stdout, child.stderr] as const) {
      (handle as unknown as { unref?: () => void }).unref?.();
    }
  }

  static async start(options: ResolvedOptions): Promise<ParserProcess> {
    const child = spawn(options.pythonPath, ["-I", "-S", "-E", "-c", PARSER_SCRIPT, String(options.memoryLimitBytes)], {
      stdio: ["pipe", "pipe", "pipe"],
      env: {},
    });
    const parser = new ParserProcess(child);
    const outcome = await parser.next(options.startTimeoutMs);
    if (outcome.kind === "answer" && isRecord(outcome.value) && outcome.value.ready === true) return parser;
    parser.kill();
    const reason =
      outcome.kind === "timeout"
        ? `it did not start within ${options.startTimeoutMs} ms`
        : outcome.kind === "exited"
          ? outcome.detail
          : "it answered the handshake with garbage";
    throw new InternalError(`could not start the Python syntax checker (${options.pythonPath}): ${reason}`);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitDetail === undefined;
  }

  /** Sends one source text and waits for its answer, the process's death, or the timeout. */
  request(source: string, timeoutMs: number): Promise<Outcome> {
    // A lone surrogate (no UTF-8 form) becomes U+FFFD, as it would when written to disk.
    const payload = Buffer.from(source, "utf8");
    const header = Buffer.alloc(4);
    header.writeUInt32BE(payload.length);
    const answer = this.next(timeoutMs);
    this.child.stdin.write(Buffer.concat([header, payload]));
    return answer;
  }

  kill(): void {
    if (!this.alive) return;
    // The handles are unref'd while idle; ref them again so the exit is delivered and close()
    // settles even when nothing else keeps the event loop alive (a CLI, a shutdown).
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr] as const) {
      (handle as unknown as { ref?: () => void }).ref?.();
    }
    this.child.kill("SIGKILL");
  }

  private next(timeoutMs: number): Promise<Outcome> {
    if (!this.alive) return Promise.resolve({ kind: "exited", detail: this.describeExit() });
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle({ kind: "timeout" }), timeoutMs);
      this.waiter = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      this.deliverBuffered();
    });
  }

  private settle(outcome: Outcome): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(outcome);
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    this.deliverBuffered();
  }

  private deliverBuffered(): void {
    if (!this.waiter || this.buffered.length < 4) return;
    const size = this.buffered.readUInt32BE(0);
    if (this.buffered.length < 4 + size) return;
    const frame = this.buffered.subarray(4, 4 + size).toString("utf8");
    this.buffered = this.buffered.subarray(4 + size);
    let value: unknown;
    try {
      value = JSON.parse(frame);
    } catch {
      value = undefined;
    }
    this.settle({ kind: "answer", value });
  }

  private describeExit(): string {
    const stderr = this.stderrTail.trim();
    return stderr ? `${this.exitDetail}: ${stderr.slice(-500)}` : (this.exitDetail ?? "exited");
  }
}

/**
 * Checks syntax with a real CPython parser: one persistent interpreter (started lazily, `-I -S
 * -E`, address space capped) that answers one request at a time. Concurrent callers are queued
 * in order. An interpreter that dies is replaced on the next check; one that dies while parsing
 * yields {@link PARSER_CRASHED_MESSAGE}; one that exceeds the per-request timeout is killed and
 * replaced, and the input is reported as too slow to parse.
 */
export class CPythonSyntaxChecker implements PythonSyntaxChecker {
  private readonly options: ResolvedOptions;
  private parser: ParserProcess | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  private inFlight = false;

  constructor(options: CPythonSyntaxCheckerOptions = {}) {
    this.options = addDefaults(options);
  }

  /** True while a check has been handed to the running parser and is not answered yet; for diagnostics and tests. */
  get checking(): boolean {
    return this.inFlight;
  }

  /** The interpreter's process id, when one is running; for diagnostics and tests. */
  get pid(): number | undefined {
    return this.parser?.alive ? this.parser.pid : undefined;
  }

  check(code: string): Promise<SyntaxVerdict> {
    if (this.closed) return Promise.reject(closedError());
    const run = this.tail.then(() => this.checkNow(code));
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    const parser = this.parser;
    this.parser = undefined;
    if (!parser) return;
    parser.kill();
    await parser.exited;
  }

  /**
   * A check that times out is run once more on a fresh parser with twice the time before the code is
   * blamed: a parser slowed by a busy machine (or stopped) is the infrastructure's fault, not the
   * skill's; code that makes the parser hang times out twice (docs/security.md#the-intake-parser).
   */
  private async checkNow(code: string, timeoutMs = this.options.timeoutMs): Promise<SyntaxVerdict> {
    if (this.closed) throw closedError();
    const parser = await this.running();
    this.inFlight = true;
    const outcome = await parser.request(code, timeoutMs).finally(() => {
      this.inFlight = false;
    });
    if (this.closed) throw closedError();
    if (outcome.kind === "answer") {
      const verdict = toVerdict(outcome.value);
      if (verdict) return verdict;
      this.options.logger?.error({ pid: parser.pid }, "python syntax checker sent a malformed answer; restarting it");
      this.retire(parser);
      throw new InternalError("the Python syntax checker sent a malformed answer");
    }
    this.retire(parser);
    if (outcome.kind === "timeout") {
      this.options.logger?.warn(
        { pid: parser.pid, timeoutMs, codeBytes: Buffer.byteLength(code) },
        "python syntax check timed out; restarting the parser",
      );
      if (timeoutMs === this.options.timeoutMs) return this.checkNow(code, timeoutMs * 2);
      return noPosition(
        `the Python parser did not finish within ${this.options.timeoutMs} ms, nor within ${timeoutMs} ms on a fresh parser`,
      );
    }
    this.options.logger?.warn({ pid: parser.pid, detail: outcome.detail }, "python parser died during a check; restarting it");
    return noPosition(PARSER_CRASHED_MESSAGE);
  }

  private async running(): Promise<ParserProcess> {
    if (this.parser?.alive) return this.parser;
    if (this.parser) {
      // Died between requests (killed from outside, OOM killer): replace it quietly.
      this.options.logger?.warn({ pid: this.parser.pid }, "python syntax checker process was gone; restarting it");
    }
    this.parser = undefined;
    const parser = await ParserProcess.start(this.options);
    if (this.closed) {
      parser.kill();
      throw closedError();
    }
    this.options.logger?.debug({ pid: parser.pid }, "python syntax checker started");
    this.parser = parser;
    return parser;
  }

  private retire(parser: ParserProcess): void {
    parser.kill();
    if (this.parser === parser) this.parser = undefined;
  }
}

function closedError(): InternalError {
  return new InternalError("the Python syntax checker is closed");
}

function noPosition(message: string): SyntaxVerdict {
  return { ok: false, message, line: 0, column: 0, atEndOfInput: false };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

function toVerdict(value: unknown): SyntaxVerdict | undefined {
  if (!isRecord(value)) return undefined;
  if (value.ok === true) {
    const imports = toImports(value.imports);
    return imports ? { ok: true, inert: value.inert === true, imports } : { ok: true, inert: value.inert === true };
  }
  const { message, line, column, atEndOfInput } = value;
  if (typeof message !== "string" || typeof line !== "number" || typeof column !== "number") return undefined;
  return { ok: false, message, line, column, atEndOfInput: atEndOfInput === true };
}

function toImports(value: unknown): ImportedModule[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const imports: ImportedModule[] = [];
  for (const entry of value as unknown[]) {
    if (!isRecord(entry) || typeof entry.module !== "string" || typeof entry.line !== "number") return undefined;
    imports.push({ module: entry.module, line: entry.line, stdlib: entry.stdlib === true, optional: entry.optional === true });
  }
  return imports;
}
