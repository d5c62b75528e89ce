import { mkdtemp, rm } from "node:fs/promises";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";

/**
 * A Unix-socket proxy in front of the real Docker engine that a test can freeze: while frozen,
 * no byte moves either way and new connections wait, exactly as an engine that hangs looks to a
 * client. Point the service's DOCKER_HOST at `dockerHost`.
 */
export interface EngineProxy {
  readonly dockerHost: string;
  freeze(): void;
  thaw(): void;
  close(): Promise<void>;
}

export async function startEngineProxy(upstream = "/var/run/docker.sock"): Promise<EngineProxy> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "engine-proxy-"));
  const socketPath = path.join(dir, "docker.sock");
  let frozen = false;
  const pairs = new Set<[Socket, Socket]>();
  const waiting: Array<() => void> = [];
  const connect = (client: Socket): void => {
    const engine = createConnection(upstream);
    const pair: [Socket, Socket] = [client, engine];
    pairs.add(pair);
    client.pipe(engine).on("error", () => undefined);
    engine.pipe(client).on("error", () => undefined);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      engine.destroy();
    };
    client.on("close", drop).on("error", drop);
    engine.on("close", drop).on("error", drop);
  };
  const server: Server = createServer((client) => {
    if (frozen) waiting.push(() => connect(client));
    else connect(client);
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    dockerHost: `unix://${socketPath}`,
    freeze() {
      frozen = true;
      for (const [client, engine] of pairs) {
        client.pause();
        engine.pause();
      }
    },
    thaw() {
      frozen = false;
      for (const [client, engine] of pairs) {
        client.resume();
        engine.resume();
      }
      for (const start of waiting.splice(0)) start();
    },
    async close() {
      for (const [client, engine] of pairs) {
        client.destroy();
        engine.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
