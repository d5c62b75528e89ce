import { spawn } from "node:child_process";

/** What an installer (pip, apt-get, dpkg-deb) is run with. */
export interface InstallerCommand {
  readonly command: string;
  readonly args: readonly string[];
  /** The whole environment: nothing of the service's own is passed on (docs/packages.md#sources). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  /** When the build's time runs out (epoch ms): the installer's whole process group is killed then. */
  readonly deadline: number;
  /** Called with each line of stdout, so a verbose installer's output is read, never kept. */
  readonly onStdoutLine?: (line: string) => void;
}

export interface InstallerOutcome {
  /** The exit code; undefined when the process was killed or could not start. */
  readonly exitCode: number | undefined;
  /** Killed at the deadline. */
  readonly timedOut: boolean;
  /** The last part of stderr (at most STDERR_KEPT_BYTES), where installers say why they failed. */
  readonly stderr: string;
  /** Why it could not start (ENOENT: not installed), when it could not. */
  readonly spawnError: string | undefined;
}

const STDERR_KEPT_BYTES = 64 * 1024;
/** A stdout line longer than this is cut: only short lines are looked for in it. */
const MAX_LINE = 4096;

/**
 * Runs one installer in a process group of its own, so that the time limit ends it and everything
 * it started (pip's resolver, apt's download methods) at once. The output is bounded: stderr's tail
 * is kept for the failure's cause, stdout is handed over line by line and dropped.
 */
export function runInstaller(command: InstallerCommand): Promise<InstallerOutcome> {
  return new Promise((resolve) => {
    let stderr = "";
    let stdoutLine = "";
    let timedOut = false;
    let spawnError: string | undefined;
    const child = spawn(command.command, command.args, {
      cwd: command.cwd,
      env: { ...command.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone: the group ended on its own between the deadline and the kill.
      }
    };
    const timer = setTimeout(
      () => {
        timedOut = true;
        killGroup();
      },
      Math.max(0, command.deadline - Date.now()),
    );
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      const lines = (stdoutLine + chunk).split("\n");
      stdoutLine = (lines.pop() ?? "").slice(0, MAX_LINE);
      for (const line of lines) command.onStdoutLine?.(line.slice(0, MAX_LINE));
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_KEPT_BYTES);
    });
    let settled = false;
    const settle = (exitCode: number | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (stdoutLine !== "") command.onStdoutLine?.(stdoutLine);
      // The group may hold a grandchild that outlived its parent (a download helper): end it too.
      if (exitCode !== 0) killGroup();
      resolve({ exitCode, timedOut, stderr, spawnError });
    };
    child.on("error", (error) => {
      spawnError = error.message;
      settle(undefined);
    });
    child.on("close", (code) => settle(code ?? undefined));
  });
}
