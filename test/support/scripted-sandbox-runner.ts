import { RunCancelledError } from "../../src/errors/index.js";
import type { EngineHealth, ExecutionResult, SandboxRunner, SandboxRunRequest } from "../../src/execution/index.js";

/** What a scripted run answers for one request. */
export type RunScript = (request: SandboxRunRequest) => ExecutionResult;

/** A run that exited 0 and printed `stdout`. */
export function succeeded(stdout: string): ExecutionResult {
  return result({ exitCode: 0, stdout, success: true });
}

/** A run that exited 1 with `summary` as its one-line cause (what a Python traceback's last line gives). */
export function failed(summary: string): ExecutionResult {
  return result({ exitCode: 1, stderr: `Traceback (most recent call last):\n${summary}\n`, errorSummary: summary, success: false });
}

function result(fields: Partial<ExecutionResult> & Pick<ExecutionResult, "exitCode" | "success">): ExecutionResult {
  return {
    stdout: "",
    stderr: "",
    durationMs: 7,
    timedOut: false,
    oomKilled: false,
    stdoutTruncated: false,
    stderrTruncated: false,
    errorSummary: "",
    ...fields,
  };
}

/**
 * A test double of the execution plane's port (src/execution/sandbox-runner.ts): it runs nothing
 * and answers each request from a script, so the control plane's use cases can be tested without
 * an engine. It keeps every request it got, and honours the request's signal as the real adapters
 * do (an aborted run is a RunCancelledError, never a result).
 * @default script: every run succeeds, echoing its payload
 */
export class ScriptedSandboxRunner implements SandboxRunner {
  readonly requests: SandboxRunRequest[] = [];
  private wiped = 0;

  constructor(private script: RunScript = (request) => succeeded(`${request.payload}\n`)) {}

  /** Answers the next runs from `script`. */
  answer(script: RunScript): void {
    this.script = script;
  }

  /** The requests of one purpose, in order. */
  runsFor(purpose: SandboxRunRequest["purpose"]): SandboxRunRequest[] {
    return this.requests.filter((request) => request.purpose === purpose);
  }

  async run(request: SandboxRunRequest): Promise<ExecutionResult> {
    this.requests.push(request);
    if (request.signal?.aborted) throw new RunCancelledError("cancelled");
    return this.script(request);
  }

  async health(): Promise<EngineHealth> {
    return { ready: true, detail: "scripted" };
  }

  async reapOrphans(): Promise<{ containers: number; runDirectories: number }> {
    return { containers: 0, runDirectories: 0 };
  }

  async wipe(): Promise<{ removedRunDirectories: number }> {
    this.wiped++;
    return { removedRunDirectories: this.wiped };
  }

  async close(): Promise<void> {}
}
