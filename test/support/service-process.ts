import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** The service as its own OS process (`src/main.ts` through tsx), so a test can SIGKILL it. */
export interface ServiceProcess {
  readonly port: number;
  readonly child: ChildProcess;
  /** JSON log lines seen so far. */
  readonly logs: Array<Record<string, unknown>>;
  /** Settles when the process has exited, with its exit code or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export async function spawnService(env: Record<string, string>): Promise<ServiceProcess> {
  return spawnProgram("src/main.ts", env, (entry) =>
    typeof entry.port === "number" && String(entry.msg).startsWith("skill engine listening") ? entry.port : undefined,
  );
}

/**
 * A runner (`src/runner-main.ts`, docs/execution-hosts.md) as its own OS process; `port` is its
 * metrics port (set SKILL_ENGINE_METRICS_PORT=0 to get a free one).
 */
export async function spawnRunner(env: Record<string, string>): Promise<ServiceProcess> {
  return spawnProgram("src/runner-main.ts", env, (entry) =>
    String(entry.msg).startsWith("skill engine runner") ? (typeof entry.metricsPort === "number" ? entry.metricsPort : 0) : undefined,
  );
}

async function spawnProgram(
  entryPoint: string,
  env: Record<string, string>,
  readyPort: (entry: Record<string, unknown>) => number | undefined,
): Promise<ServiceProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", entryPoint], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      SKILL_ENGINE_PORT: "0",
      SKILL_ENGINE_LOG_LEVEL: "info",
      SKILL_ENGINE_POOL: "off",
      SKILL_ENGINE_METRICS_PORT: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Array<Record<string, unknown>> = [];
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`service did not start in time; stderr:\n${stderr}`));
    }, 60_000);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before listening; stderr:\n${stderr}`));
    });
    createInterface({ input: child.stdout! }).on("line", (line) => {
      try {
        const entry = JSON.parse(line) as Record<string, unknown>;
        logs.push(entry);
        const ready = readyPort(entry);
        if (ready !== undefined) {
          clearTimeout(timer);
          resolve(ready);
        }
      } catch {
        // not a log line
      }
    });
  });
  return {
    port,
    child,
    logs,
    exited,
    async kill(signal = "SIGKILL") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
