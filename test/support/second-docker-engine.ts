import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import Docker from "dockerode";
import { processesWhoseArgvContains as processesMentioning } from "./host-probes.js";
import { eventually } from "./poll.js";

/**
 * A Docker engine of the test's own, beside the shared one (its own data root, exec root,
 * socket and pid file; no bridge, no iptables), so a test can stop and restart it without
 * disturbing anybody else's runs. The sandbox image is copied in from the shared engine.
 */
export interface SecondDockerEngine {
  /** For the service's DOCKER_HOST. */
  readonly dockerHost: string;
  /** A client of this engine, for assertions. */
  readonly docker: Docker;
  /** SIGTERM, as `systemctl stop docker` sends it; resolves when the daemon has exited. */
  stop(): Promise<void>;
  /** Starts the daemon again on the same data root; resolves when it answers. */
  start(): Promise<void>;
  /** Stops the daemon and deletes its directories. */
  dispose(): Promise<void>;
}

export async function startSecondDockerEngine(image: string): Promise<SecondDockerEngine> {
  const root = await mkdtemp(path.join(os.tmpdir(), "second-dockerd-"));
  const socketPath = path.join(root, "docker.sock");
  const pidFile = path.join(root, "docker.pid");
  const docker = new Docker({ socketPath });
  let daemon: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  const start = async (): Promise<void> => {
    // A daemon that was killed leaves its pid file behind and the next one refuses to start.
    await rm(pidFile, { force: true });
    const child = spawn(
      "dockerd",
      [
        `--data-root=${path.join(root, "data")}`,
        `--exec-root=${path.join(root, "exec")}`,
        `--host=unix://${socketPath}`,
        `--pidfile=${pidFile}`,
        "--bridge=none",
        "--iptables=false",
        "--ip-masq=false",
      ],
      { stdio: "ignore" },
    );
    daemon = child;
    exited = new Promise((resolve) => child.once("exit", () => resolve()));
    await eventually("the second Docker engine to answer", () => docker.ping().then(() => true), { timeoutMs: 60_000 });
  };
  const stop = async (): Promise<void> => {
    const pid = daemon?.pid ?? Number(await readFile(pidFile, "utf8").catch(() => "0"));
    if (pid > 0) process.kill(pid, "SIGTERM");
    await exited;
    daemon = undefined;
  };

  await start();
  if (!(await docker.listImages({ filters: { reference: [image] } })).length) {
    // docker save | docker load, between the two engines.
    const shared = new Docker({ socketPath: "/var/run/docker.sock" });
    const archive = await shared.getImage(image).get();
    const loading = await docker.loadImage(archive as NodeJS.ReadableStream);
    await new Promise<void>((resolve, reject) => docker.modem.followProgress(loading, (error) => (error ? reject(error) : resolve())));
  }
  return {
    dockerHost: `unix://${socketPath}`,
    docker,
    stop,
    start,
    async dispose() {
      const leftovers = await docker.listContainers({ all: true }).catch(() => []);
      for (const info of leftovers)
        await docker
          .getContainer(info.Id)
          .remove({ force: true })
          .catch(() => undefined);
      await stop();
      // A container shim can outlive its daemon (shims are made to survive it); ours are the
      // processes whose command line names this engine's exec root.
      for (const pid of await processesMentioning(path.join(root, "exec"))) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // Already gone.
        }
      }
      await rm(root, { recursive: true, force: true }).catch(() => undefined);
    },
  };
}
