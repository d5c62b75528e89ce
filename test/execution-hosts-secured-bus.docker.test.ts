import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "./support/nats-server.js";
import { selfSigned } from "./support/self-signed.js";
import { type ServiceProcess, spawnRunner, spawnService } from "./support/service-process.js";
import { connect } from "./support/test-engine.js";

const TOKEN = "bus-token-for-the-auth-test-0123456789";
const WRONG = "not-the-bus-token-0123456789abcdef";

const DOUBLER = `import json, sys
print(json.dumps({"doubled": json.loads(sys.argv[1])["x"] * 2}))
`;

/** Why a process that was expected not to start did not: the spawn's rejection message. */
function failureOf(start: Promise<ServiceProcess>): Promise<string> {
  return start.then(
    async (started) => {
      await started.kill("SIGKILL");
      return "it started";
    },
    (error: unknown) => (error instanceof Error ? error.message : String(error)),
  );
}

/** Stops what a describe block started, newest first, then its bus and its directory. */
async function tearDown(processes: ServiceProcess[], bus: NatsServer | undefined, root: string | undefined): Promise<void> {
  for (const process of processes.reverse()) await process.kill("SIGTERM");
  await bus?.dispose();
  if (root) await rm(root, { recursive: true, force: true });
}

/**
 * A bus that requires a token (nats-server's `authorization { token }`), as a deployment that
 * follows docs/execution-hosts.md#the-bus has: runner and control plane with the token serve;
 * either side with a wrong one refuses to start, with exit code 2 and a message that names the
 * cause and never the token.
 */
describe("execution hosts on a bus that requires a token", () => {
  let bus: NatsServer;
  let root: string;
  const processes: ServiceProcess[] = [];

  const runnerEnv = (token: string, id: string): Record<string, string> => ({
    SKILL_ENGINE_NATS_URL: bus.url,
    SKILL_ENGINE_NATS_TOKEN: token,
    SKILL_ENGINE_RUNNER_ID: id,
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, id),
    SKILL_ENGINE_MAX_CONCURRENT_RUNS: "2",
  });
  const planeEnv = (token: string, name: string): Record<string, string> => ({
    SKILL_ENGINE_EXECUTION: "nats",
    SKILL_ENGINE_NATS_URL: bus.url,
    SKILL_ENGINE_NATS_TOKEN: token,
    SKILL_ENGINE_HOME: path.join(root, name, "home"),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, name, "sandbox"),
    // The control plane uses no engine of its own in this mode.
    DOCKER_HOST: "unix:///nonexistent/docker.sock",
  });

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "bus-auth-"));
    bus = await startNatsServer({ extraConfig: `authorization { token: "${TOKEN}" }`, probe: { token: TOKEN } });
  }, 60_000);

  afterAll(() => tearDown(processes, bus, root), 120_000);

  it("a runner and a control plane with the token register and invoke through the bus", async () => {
    processes.push(await spawnRunner(runnerEnv(TOKEN, "auth-runner")));
    const plane = await spawnService(planeEnv(TOKEN, "plane"));
    processes.push(plane);
    const client = connect(plane.port);
    try {
      const registered = await client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' }, 120_000);
      expect(registered.test?.success).toBe(true);
      const invoked = await client.invoke("doubler", '{"x": 21}', 120_000);
      expect(JSON.parse(invoked.result?.stdout ?? "")).toEqual({ doubled: 42 });
    } finally {
      client.close();
    }
  }, 180_000);

  it("a control plane or a runner with a wrong token exits with 2, saying the bus refused it, without the token", async () => {
    for (const failure of [
      await failureOf(spawnService(planeEnv(WRONG, "wrong-plane"))),
      await failureOf(spawnRunner(runnerEnv(WRONG, "wrong-runner"))),
    ]) {
      expect(failure).toMatch(/exited with 2 before listening/);
      expect(failure).toMatch(/cannot start: .*NATS bus/);
      expect(failure).toMatch(/Authorization Violation; the bus refused the credentials: check SKILL_ENGINE_NATS_TOKEN/);
      expect(failure).not.toContain(WRONG);
      expect(failure).not.toContain(TOKEN);
      expect(failure).not.toMatch(/\n\s+at /);
    }
  }, 120_000);
});

/**
 * A bus that requires TLS (nats-server's `tls` block, a certificate its clients must trust):
 * SKILL_ENGINE_NATS_TLS_CA on both sides serves; without it the first connection is refused and
 * the process says to check the TLS settings.
 */
describe("execution hosts on a bus that requires TLS", () => {
  let bus: NatsServer;
  let root: string;
  let certificate: { certFile: string; keyFile: string };
  const processes: ServiceProcess[] = [];

  const common = (name: string, ca: boolean): Record<string, string> => ({
    SKILL_ENGINE_NATS_URL: bus.url,
    ...(ca ? { SKILL_ENGINE_NATS_TLS_CA: certificate.certFile } : {}),
    SKILL_ENGINE_SANDBOX_DIR: path.join(root, name, "sandbox"),
  });

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "bus-tls-"));
    certificate = await selfSigned(root, "bus");
    bus = await startNatsServer({
      extraConfig: `tls { cert_file: "${certificate.certFile}", key_file: "${certificate.keyFile}" }`,
      probe: { tls: { caFile: certificate.certFile } },
    });
  }, 60_000);

  afterAll(() => tearDown(processes, bus, root), 120_000);

  it("a runner and a control plane that trust the bus's certificate invoke through it; one that does not refuses to start", async () => {
    processes.push(await spawnRunner({ ...common("tls-runner", true), SKILL_ENGINE_RUNNER_ID: "tls-runner" }));
    const planeEnv = (name: string, ca: boolean) => ({
      ...common(name, ca),
      SKILL_ENGINE_EXECUTION: "nats",
      SKILL_ENGINE_HOME: path.join(root, name, "home"),
      DOCKER_HOST: "unix:///nonexistent/docker.sock",
    });
    const plane = await spawnService(planeEnv("tls-plane", true));
    processes.push(plane);
    const client = connect(plane.port);
    try {
      await client.register({ name: "doubler", code: DOUBLER, testPayload: '{"x": 1}' }, 120_000);
      expect(JSON.parse((await client.invoke("doubler", '{"x": 4}', 120_000)).result?.stdout ?? "")).toEqual({ doubled: 8 });
    } finally {
      client.close();
    }

    const failure = await failureOf(spawnService(planeEnv("untrusting-plane", false)));
    expect(failure).toMatch(/exited with 2 before listening/);
    expect(failure).toMatch(/cannot start: cannot connect to the NATS bus .*check SKILL_ENGINE_NATS_TLS_\*/);
  }, 180_000);
});
