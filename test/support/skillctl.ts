import { execFile } from "node:child_process";
import path from "node:path";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const CLI = path.join(ROOT, "src", "cli", "skillctl.ts");

/** What a skillctl process did: its exit code and what it printed. */
export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * skillctl as its own process (`src/cli/skillctl.ts` through tsx), as an operator runs it: no
 * address, token or CA is taken from the test's own environment, only from `env` and `args`.
 */
export function skillctlWith(env: Record<string, string>, ...args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { cwd: ROOT, env: { ...process.env, SKILLCTL_ADDRESS: "", SKILLCTL_TOKEN: "", SKILLCTL_TLS_CA: "", ...env }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
    );
  });
}

/** skillctl against the service on `127.0.0.1:<port>`, as the local agent. */
export function skillctl(port: number, ...args: string[]): Promise<CliRun> {
  return skillctlWith({}, "--address", `127.0.0.1:${port}`, ...args);
}

/** skillctl against the service on `127.0.0.1:<port>` with a bearer token (none when undefined). */
export function skillctlAs(port: number, token: string | undefined, ...args: string[]): Promise<CliRun> {
  return skillctlWith(token === undefined ? {} : { SKILLCTL_TOKEN: token }, "--address", `127.0.0.1:${port}`, ...args);
}
