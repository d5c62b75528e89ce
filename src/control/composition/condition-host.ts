import { fork, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Logger } from "pino";
import { errorMessage, RunCancelledError, UnavailableError } from "../../errors/index.js";
import { ConditionError, type ConditionEvaluator } from "./condition.js";
import { CONDITION_LIMITS } from "./condition-evaluation.js";
import type { ConditionMessage, ConditionRequest } from "./condition-host-main.js";
import type { TemplateScope } from "./template.js";

export interface ConditionHostOptions {
  /**
   * How long one evaluation may take before the process running it is killed (and replaced).
   * @default CONDITION_LIMITS.wallClockMs (1000)
   */
  readonly wallClockMs?: number;
  /**
   * The evaluating process's V8 heap (`--max-old-space-size`), MiB.
   * @default CONDITION_LIMITS.heapMiB (256)
   */
  readonly heapMiB?: number;
  /**
   * How long the process may take to start and say it is ready.
   * @default 30000
   */
  readonly startTimeoutMs?: number;
  /** Restarts, kills and crashes are logged here. @default no logging */
  readonly logger?: Logger;
}

type ResolvedOptions = Required<Omit<ConditionHostOptions, "logger">> & { readonly logger: Logger | undefined };

function addDefaults(options: ConditionHostOptions): ResolvedOptions {
  const resolved = {
    wallClockMs: options.wallClockMs ?? CONDITION_LIMITS.wallClockMs,
    heapMiB: options.heapMiB ?? CONDITION_LIMITS.heapMiB,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    logger: options.logger,
  };
  for (const key of ["wallClockMs", "heapMiB", "startTimeoutMs"] as const) {
    if (!Number.isInteger(resolved[key]) || resolved[key] <= 0) {
      throw new RangeError(`ConditionHost: ${key} must be a positive integer, got ${resolved[key]}`);
    }
  }
  return resolved;
}

/**
 * The child's program and the Node flags it needs: the compiled JavaScript beside this file when the
 * service runs from `dist/`; from `src/` (vitest, `tsx src/main.ts`) the TypeScript program itself
 * through tsx's loader (a dev dependency, present wherever the sources run), so nothing depends on
 * `dist/` being built.
 */
function hostProgram(): { readonly file: string; readonly loader: readonly string[] } {
  const here = fileURLToPath(import.meta.url);
  if (!here.endsWith(".ts")) return { file: fileURLToPath(new URL("./condition-host-main.js", import.meta.url)), loader: [] };
  const tsx = createRequire(import.meta.url).resolve("tsx");
  return { file: fileURLToPath(new URL("./condition-host-main.ts", import.meta.url)), loader: ["--import", pathToFileURL(tsx).href] };
}

/** What V8 prints when a process cannot allocate (heap limit reached, or a single allocation too large). */
const OUT_OF_MEMORY = /heap out of memory|invalid size error|invalid array length|allocation failed|reached heap limit/i;

type Outcome =
  | { readonly kind: "answer"; readonly value?: boolean; readonly error?: string }
  | { readonly kind: "exited"; readonly detail: string; readonly outOfMemory: boolean }
  | { readonly kind: "timeout" }
  | { readonly kind: "unsendable"; readonly error: string };

/** One running child and its IPC channel. Knows nothing about restarts. */
class ConditionProcess {
  private stderrTail = "";
  private waiter: ((outcome: Outcome) => void) | undefined;
  private exitDetail: string | undefined;
  private nextId = 0;
  /** Set by kill(): a death that is not the evaluation's doing. */
  private killed = false;
  /** V8 said on stderr that it could not allocate. */
  private outOfMemory = false;
  readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcess) {
    let ended: () => void = () => undefined;
    this.exited = new Promise((resolve) => {
      ended = resolve;
    });
    // "close", not "exit": stderr is read to its end first, so an out-of-memory death is told apart.
    child.once("close", (code, signal) => {
      this.exitDetail ??= signal ? `killed by ${signal}` : `exited with code ${code}`;
      ended();
      this.settle({ kind: "exited", detail: this.describeExit(), outOfMemory: this.outOfMemory });
    });
    child.on("error", (error) => {
      // A fork that fails (ENOMEM, EAGAIN) arrives here, and no "close" follows: nothing is running.
      // Any other error (a kill of a process already gone) changes nothing; "close" reports a death.
      if (child.pid !== undefined) return;
      this.exitDetail = errorMessage(error);
      ended();
      this.settle({ kind: "exited", detail: this.describeExit(), outOfMemory: false });
    });
    child.on("message", (message: ConditionMessage) => {
      if (message.type === "result" && message.id === this.nextId - 1) {
        this.settle({
          kind: "answer",
          ...(message.value === undefined ? {} : { value: message.value }),
          ...(message.error === undefined ? {} : { error: message.error }),
        });
      } else if (message.type === "ready") this.settle({ kind: "answer" });
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      const text = this.stderrTail + chunk.toString("utf8");
      // Latched as it is read: V8's native stack trace follows the line that says so.
      this.outOfMemory ||= OUT_OF_MEMORY.test(text);
      this.stderrTail = text.slice(-4_000);
    });
    this.idle();
  }

  static async start(options: ResolvedOptions): Promise<ConditionProcess> {
    const program = hostProgram();
    const child = fork(program.file, [], {
      // Not this process's flags (a test runner's, an inspector port): the caps, and a loader when running from sources.
      execArgv: [`--max-old-space-size=${options.heapMiB}`, `--max-semi-space-size=${CONDITION_LIMITS.semiSpaceMiB}`, ...program.loader],
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      serialization: "advanced",
    });
    const host = new ConditionProcess(child);
    host.busy();
    const outcome = await host.next(options.startTimeoutMs);
    host.idle();
    if (outcome.kind === "answer") return host;
    host.kill();
    const reason = outcome.kind === "timeout" ? `it did not start within ${options.startTimeoutMs} ms` : errorDetail(outcome);
    throw new UnavailableError(`the condition evaluator could not start: ${reason}`);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get alive(): boolean {
    return this.exitDetail === undefined;
  }

  /** True when the process died because kill() was called (a wall-clock kill, a close). */
  get killedByHost(): boolean {
    return this.killed;
  }

  /** Sends one condition and waits for its answer, the process's death, or the wall clock. */
  async request(text: string, scope: TemplateScope, timeoutMs: number): Promise<Outcome> {
    const request: ConditionRequest = { id: this.nextId++, text, scope };
    this.busy();
    try {
      const answer = this.next(timeoutMs);
      try {
        // Serializes synchronously: a value it cannot copy throws here, before anything is sent. A
        // send that races the child's death is answered by "close", so its callback has nothing to add.
        this.child.send(request, () => undefined);
      } catch (error) {
        this.settle({ kind: "unsendable", error: errorMessage(error) });
      }
      return await answer;
    } finally {
      this.idle();
    }
  }

  kill(): void {
    if (!this.alive) return;
    this.killed = true;
    // Referenced again so the exit is delivered even when nothing else keeps the event loop alive (a shutdown).
    this.busy();
    this.child.kill("SIGKILL");
  }

  private next(timeoutMs: number): Promise<Outcome> {
    if (!this.alive) return Promise.resolve({ kind: "exited", detail: this.describeExit(), outOfMemory: false });
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle({ kind: "timeout" }), timeoutMs);
      this.waiter = (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
    });
  }

  private settle(outcome: Outcome): void {
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(outcome);
  }

  /** An idle host must not keep the service alive; a request in flight must. */
  private idle(): void {
    for (const handle of this.handles()) handle.unref?.();
  }

  private busy(): void {
    for (const handle of this.handles()) handle.ref?.();
  }

  private handles(): Array<{ ref?: () => void; unref?: () => void }> {
    // The IPC pipe and stderr have handles of their own besides the process's.
    return [this.child, this.child.channel ?? {}, this.child.stderr ?? {}] as Array<{ ref?: () => void; unref?: () => void }>;
  }

  private describeExit(): string {
    const lines = this.stderrTail
      .split("\n")
      .map((line) => line.trim())
      .filter(Boolean);
    const said = lines.find((line) => /error/i.test(line)) ?? lines.at(-1);
    return said ? `${this.exitDetail}: ${said.slice(0, 300)}` : (this.exitDetail ?? "exited");
  }
}

function errorDetail(outcome: Outcome): string {
  if (outcome.kind === "exited") return outcome.detail;
  if (outcome.kind === "unsendable") return outcome.error;
  return outcome.kind;
}

/**
 * Evaluates conditions away from the service (docs/composition.md#where-conditions-run): one
 * persistent child process (started on first use, heap capped) answers one condition at a time over
 * IPC; callers queue in order. A condition still running at the wall clock has its process killed;
 * one that makes the process die (out of memory) fails with that cause; either way the next
 * condition gets a fresh process. The service's event loop never runs a condition, so a runaway
 * never blocks another caller's call, and never ends the service.
 */
export class ConditionHost implements ConditionEvaluator {
  private readonly options: ResolvedOptions;
  private host: ConditionProcess | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(options: ConditionHostOptions = {}) {
    this.options = addDefaults(options);
  }

  /** The evaluating process's id, when one is running; for diagnostics and tests. */
  get pid(): number | undefined {
    return this.host?.alive ? this.host.pid : undefined;
  }

  evaluate(text: string, scope: TemplateScope): Promise<boolean> {
    if (this.closed) return Promise.reject(new RunCancelledError("shutdown"));
    const run = this.tail.then(() => this.evaluateNow(text, scope));
    this.tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    const host = this.host;
    this.host = undefined;
    if (!host) return;
    host.kill();
    await host.exited;
  }

  private async evaluateNow(text: string, scope: TemplateScope, attempt = 1): Promise<boolean> {
    if (this.closed) throw new RunCancelledError("shutdown");
    const host = await this.running();
    const outcome = await host.request(text, scope, this.options.wallClockMs);
    if (this.closed) throw new RunCancelledError("shutdown");
    const { logger, wallClockMs, heapMiB } = this.options;
    switch (outcome.kind) {
      case "answer":
        if (outcome.error !== undefined) throw new ConditionError(text, outcome.error);
        return outcome.value === true;
      case "unsendable":
        throw new ConditionError(text, `the values it reads cannot be handed to the evaluator: ${outcome.error}`);
      case "timeout":
        this.retire(host);
        logger?.warn({ pid: host.pid, wallClockMs }, "a condition ran past its wall clock; its process was killed");
        throw new ConditionError(text, `it ran longer than ${wallClockMs} ms and was stopped`);
      case "exited":
        this.retire(host);
        if (outcome.outOfMemory) {
          logger?.warn({ pid: host.pid, heapMiB }, "a condition exhausted its process's memory; the process is replaced");
          throw new ConditionError(text, `it ran out of memory (the evaluator's ${heapMiB} MiB) and was stopped`);
        }
        // Killed from outside (an operator, the OOM killer) while this condition ran: not its doing, once.
        logger?.warn({ pid: host.pid, detail: outcome.detail, attempt }, "the condition evaluator died during an evaluation");
        if (attempt === 1 && !host.killedByHost) return this.evaluateNow(text, scope, 2);
        throw new ConditionError(text, `the evaluator's process ended while it ran (${outcome.detail})`);
    }
  }

  private async running(): Promise<ConditionProcess> {
    if (this.host?.alive) return this.host;
    if (this.host) this.options.logger?.warn({ pid: this.host.pid }, "the condition evaluator's process was gone; starting another");
    this.host = undefined;
    const host = await ConditionProcess.start(this.options);
    if (this.closed) {
      host.kill();
      throw new RunCancelledError("shutdown");
    }
    this.options.logger?.debug({ pid: host.pid }, "condition evaluator started");
    this.host = host;
    return host;
  }

  private retire(host: ConditionProcess): void {
    host.kill();
    if (this.host === host) this.host = undefined;
  }
}
