import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { credentials, status } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServerCredentials } from "../src/grpc/index.js";
import { healthProbe } from "./support/health-client.js";
import { selfSigned } from "./support/self-signed.js";
import { spawnService } from "./support/service-process.js";
import { connect, makeDirs, rpcError, startTestEngine, type TestEngine } from "./support/test-engine.js";

describe("TLS on the gRPC port", () => {
  let dir: string;
  let pair: { certFile: string; keyFile: string };
  let other: { certFile: string; keyFile: string };
  let engine: TestEngine;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skill-engine-tls-"));
    pair = await selfSigned(dir, "server");
    other = await selfSigned(dir, "other");
    engine = await startTestEngine({ env: { SKILL_ENGINE_TLS_CERT: pair.certFile, SKILL_ENGINE_TLS_KEY: pair.keyFile } });
  });
  afterAll(async () => {
    await engine?.dispose();
    await rm(dir, { recursive: true, force: true });
  });

  it("a client that trusts the certificate is served; health and reflection ride the same port", async () => {
    const trusting = credentials.createSsl(await readFile(pair.certFile));
    const client = connect(engine.app.port, undefined, trusting);
    try {
      expect((await client.list()).skills).toEqual([]);
    } finally {
      client.close();
    }
    const health = healthProbe(engine.app.port, credentials.createSsl(await readFile(pair.certFile)));
    try {
      // The engine answered the start-up probe, so the service says it can run skills.
      expect(await health.check()).toBe("SERVING");
    } finally {
      health.close();
    }
  });

  it("a plaintext client, or one that does not trust the certificate, gets nothing but UNAVAILABLE", async () => {
    const plaintext = connect(engine.app.port);
    const untrusting = connect(engine.app.port, undefined, credentials.createSsl(await readFile(other.certFile)));
    try {
      expect((await rpcError(plaintext.list())).code).toBe(status.UNAVAILABLE);
      expect((await rpcError(untrusting.list())).code).toBe(status.UNAVAILABLE);
    } finally {
      plaintext.close();
      untrusting.close();
    }
  });

  it("unusable PEM files fail the start with the variable and the file named", async () => {
    const missing = path.join(dir, "missing.crt");
    await expect(loadServerCredentials({ certFile: missing, keyFile: pair.keyFile })).rejects.toThrow(
      `SKILL_ENGINE_TLS_CERT (${missing}): cannot read the PEM certificate chain`,
    );
    const garbage = path.join(dir, "garbage.key");
    await writeFile(garbage, "not a key\n");
    await expect(loadServerCredentials({ certFile: pair.certFile, keyFile: garbage })).rejects.toThrow(
      `SKILL_ENGINE_TLS_KEY (${garbage}) is not an unencrypted PEM private key`,
    );
    await expect(loadServerCredentials({ certFile: pair.certFile, keyFile: other.keyFile })).rejects.toThrow(
      `SKILL_ENGINE_TLS_KEY (${other.keyFile}) is not the private key of the certificate in SKILL_ENGINE_TLS_CERT (${pair.certFile})`,
    );
    await expect(loadServerCredentials({ certFile: garbage, keyFile: pair.keyFile })).rejects.toThrow(
      `SKILL_ENGINE_TLS_CERT (${garbage}) is not a PEM certificate chain`,
    );
  });

  it("the service process says whether it listens with TLS, and refuses to start with an unreadable key", async () => {
    const dirs = await makeDirs();
    try {
      const env = { SKILL_ENGINE_HOME: dirs.home, SKILL_ENGINE_SANDBOX_DIR: dirs.sandboxDir };
      const secure = await spawnService({ ...env, SKILL_ENGINE_TLS_CERT: pair.certFile, SKILL_ENGINE_TLS_KEY: pair.keyFile });
      await secure.kill("SIGTERM");
      expect(secure.logs.find((entry) => String(entry.msg).startsWith("skill engine listening"))).toMatchObject({ tls: true });

      const missingKey = path.join(dir, "nowhere.key");
      const refused = await spawnService({ ...env, SKILL_ENGINE_TLS_CERT: pair.certFile, SKILL_ENGINE_TLS_KEY: missingKey }).then(
        () => new Error("expected the start to fail"),
        (error: unknown) => error as Error,
      );
      expect(refused.message).toContain(
        `skill-engine: cannot start: SKILL_ENGINE_TLS_KEY (${missingKey}): cannot read the PEM private key`,
      );
      // An operator's mistake: the message, not a stack trace.
      expect(refused.message).not.toMatch(/\n\s+at /);
    } finally {
      await rm(dirs.root, { recursive: true, force: true });
    }
  });
});
