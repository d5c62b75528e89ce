import { mkdtemp, rm } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HealthProbe, healthProbe } from "./support/health-client.js";
import { eventually } from "./support/poll.js";
import { containersOf, rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

const DOUBLER = `import json, sys
args = json.loads(sys.argv[1])
print(json.dumps({"doubled": args.get("x", 0) * 2}))
`;

/** Where the real engine listens: the host's DOCKER_HOST when set, else the default socket. */
function realEngine(): net.NetConnectOpts {
  const host = process.env.DOCKER_HOST;
  if (host?.startsWith("tcp://")) {
    const url = new URL(host.replace(/^tcp:/, "http:"));
    return { host: url.hostname, port: Number(url.port) };
  }
  return { path: host?.startsWith("unix://") ? host.slice("unix://".length) : "/var/run/docker.sock" };
}

/**
 * A unix socket that, while open, pipes every connection to the real engine: the service under
 * test sees an engine that comes and goes. Closing it also cuts the connections already piped.
 */
class EngineProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();

  constructor(readonly socketPath: string) {}

  async open(): Promise<void> {
    await rm(this.socketPath, { force: true });
    const server = net.createServer((downstream) => {
      const upstream = net.connect(realEngine());
      for (const socket of [downstream, upstream]) {
        this.sockets.add(socket);
        socket.on("close", () => this.sockets.delete(socket));
        socket.on("error", () => {
          downstream.destroy();
          upstream.destroy();
        });
      }
      downstream.pipe(upstream).pipe(downstream);
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.socketPath, () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(this.socketPath, { force: true });
  }
}

/** Statuses as a sequence of changes (the probe re-announces the same status on every round). */
function changes(statuses: readonly string[]): string[] {
  return statuses.filter((status, index) => index === 0 || statuses[index - 1] !== status);
}

describe("health follows the Docker engine as it goes away and comes back, without a restart", () => {
  let dir: string;
  let proxy: EngineProxy;
  let engine: TestEngine;
  let health: HealthProbe;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skill-engine-proxy-"));
    proxy = new EngineProxy(path.join(dir, "docker.sock"));
    engine = await startTestEngine({
      env: { DOCKER_HOST: `unix://${proxy.socketPath}`, SKILL_ENGINE_ENGINE_PROBE_MS: "200" },
    });
    health = healthProbe(engine.app.port);
  });
  afterAll(async () => {
    health?.close();
    await engine?.dispose();
    await proxy?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("NOT_SERVING and UNAVAILABLE while the engine is gone, SERVING and working once it is back, and again", async () => {
    const watch = health.watch();

    // Started with no engine behind the socket.
    expect(await health.check()).toBe("NOT_SERVING");
    expect(await health.check("")).toBe("NOT_SERVING");
    const refused = await rpcError(engine.client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' }));
    expect(refused.code, refused.details).toBe(status.UNAVAILABLE);

    // The engine appears: the next probes notice, no restart needed.
    await proxy.open();
    await eventually("health to say SERVING", async () => ((await health.check()) === "SERVING" ? true : undefined));
    expect(await health.check("")).toBe("SERVING");
    const registered = await engine.client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' });
    expect(registered.test?.success).toBe(true);
    const invoked = await engine.client.invoke("doubler", '{"x": 21}');
    expect(invoked.result?.success).toBe(true);
    expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ doubled: 42 });

    // The engine goes away again.
    await proxy.close();
    await eventually("health to say NOT_SERVING", async () => ((await health.check()) === "NOT_SERVING" ? true : undefined));
    const cut = await rpcError(engine.client.invoke("doubler", '{"x": 1}'));
    expect(cut.code).toBe(status.UNAVAILABLE);

    // A Watch stream saw every change as it happened.
    await eventually("the watch stream to see the last change", () => (changes(watch.statuses).length >= 3 ? true : undefined));
    expect(changes(watch.statuses)).toEqual(["NOT_SERVING", "SERVING", "NOT_SERVING"]);
    watch.cancel();
    expect((await watch.ended)?.code).toBe(status.CANCELLED);

    // The last invocation's container was waiting for its removal when the engine went: once the
    // engine is back, the sweep removes it (the service was not restarted).
    await proxy.open();
    await eventually("the sweep to remove what the engine's absence left", async () =>
      (await containersOf(engine.instanceTag)).length === 0 ? true : undefined,
    );
  });
});
