import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { type ConnectionOptions, connect } from "@nats-io/transport-node";
import { eventually } from "./poll.js";

/** Debian's nats-server (installed by scripts/ensure-test-tools.sh), started by a test on a free loopback port. */
export interface NatsServer {
  readonly url: string;
  /** Stops the server (SIGTERM) and removes its files. */
  dispose(): Promise<void>;
}

/** Runs up to 32 MiB: a skill folder of up to 20 MB travels in its run message (docs/execution-hosts.md#the-bus). */
const MAX_PAYLOAD = 32 * 1024 * 1024;

/** `extraConfig` is appended to the server's configuration (authorization, tls blocks); `probe` connects as a client would. */
export async function startNatsServer(options: { extraConfig?: string; probe?: ConnectionOptions } = {}): Promise<NatsServer> {
  const root = await mkdtemp(path.join(os.tmpdir(), "nats-test-"));
  const port = await freePort();
  const config = path.join(root, "nats.conf");
  await writeFile(config, `listen: "127.0.0.1:${port}"\nmax_payload: ${MAX_PAYLOAD}\n${options.extraConfig ?? ""}\n`);
  const child: ChildProcess = spawn(process.env.NATS_SERVER ?? "nats-server", ["-c", config], { stdio: "ignore" });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `nats://127.0.0.1:${port}`;
  await eventually(
    "nats-server to accept connections",
    async () => {
      const probe = await connect({ servers: url, reconnect: false, ...options.probe }).catch(() => undefined);
      if (!probe) return undefined;
      await probe.close();
      return true;
    },
    { timeoutMs: 20_000 },
  );
  return {
    url,
    async dispose() {
      if (child.exitCode === null) child.kill("SIGTERM");
      await exited;
      await rm(root, { recursive: true, force: true });
    },
  };
}

async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}
