import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsServer, startNatsServer } from "./support/nats-server.js";
import { type ServiceProcess, spawnRunner } from "./support/service-process.js";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";

const NAME = "GEO_TOKEN";
const MARK = `[secret:${NAME}]`;
const VALUE = `geo ${randomBytes(8).toString("hex")}/+`;

const CODE = `import base64, hashlib, os, sys
v = os.environ["${NAME}"]
print("plain", v)
print("b64", base64.b64encode(v.encode()).decode())
print("digest", hashlib.sha256(v.encode()).hexdigest())
print("stderr", v, file=sys.stderr)
`;

/**
 * Secrets over the bus (docs/security.md#declaring-and-delivering, docs/execution-hosts.md#messages): a control
 * plane with SKILL_ENGINE_EXECUTION=nats hands the invoking agent's values to a runner process in the run
 * request; the runner's container gets them on stdin like a local one, and the result is redacted on the
 * control plane's side. The runner's logs (debug) never hold a value.
 */
describe("secrets delivered through a runner on the bus", () => {
  let bus: NatsServer;
  let root: string;
  let runner: ServiceProcess;
  let plane: TestEngine;

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), "secrets-bus-"));
    bus = await startNatsServer();
    runner = await spawnRunner({
      SKILL_ENGINE_NATS_URL: bus.url,
      SKILL_ENGINE_RUNNER_ID: "secrets-runner",
      SKILL_ENGINE_SANDBOX_DIR: path.join(root, "runner-sandbox"),
      SKILL_ENGINE_LOG_LEVEL: "debug",
    });
    plane = await startTestEngine({
      env: {
        SKILL_ENGINE_EXECUTION: "nats",
        SKILL_ENGINE_NATS_URL: bus.url,
        SKILL_ENGINE_DISPATCH_WAIT_MS: "30000",
        // The control plane uses no engine of its own in this mode: a wrong address proves it.
        DOCKER_HOST: "unix:///nonexistent/docker.sock",
      },
    });
  }, 120_000);
  afterAll(async () => {
    await plane?.dispose();
    await runner?.kill("SIGTERM");
    await bus?.dispose();
    await rm(root, { recursive: true, force: true });
  });

  it("the test run and an invocation get the caller's value, and come back redacted", async () => {
    const { client } = plane;
    await client.call(client.raw.setSecret, { name: NAME, value: VALUE });
    const registered = await client.register({ name: "geo", code: CODE, secrets: [NAME] }, 180_000);
    const digest = createHash("sha256").update(VALUE).digest("hex");
    const invoked = await client.invoke("geo", "{}", 120_000);
    for (const result of [registered.test, invoked.result]) {
      expect(result?.stdout).toBe(`plain ${MARK}\nb64 ${MARK}\ndigest ${digest}\n`);
      expect(result?.stderr).toBe(`stderr ${MARK}\n`);
    }
    const b64 = Buffer.from(VALUE).toString("base64");
    const logs = JSON.stringify(runner.logs);
    expect([logs.includes(VALUE), logs.includes(b64)]).toEqual([false, false]);
  }, 300_000);
});
