import { execFileSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestEngine, type TestEngine } from "./support/test-engine.js";
import { skillctlWith } from "./support/skillctl.js";

/*
 * skillctl against the real service: one serving TLS (SKILL_ENGINE_TLS_CERT/KEY, a certificate
 * signed by a throwaway CA) and one plaintext, both with tokens configured, so the handshake
 * against --tls-ca or the system roots and the bearer token travelling inside TLS are checked
 * by what the service itself says of the caller.
 */

const TOKEN = "tls-test-token-7c3e91a0b2d4f658";

describe("skillctl over TLS, against the real service with tokens", () => {
  let dir: string;
  let ca: string;
  let otherCa: string;
  let tls: TestEngine;
  let plain: TestEngine;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-tls-"));
    // A throwaway CA and a server certificate for 127.0.0.1 signed by it; a second, unrelated CA.
    const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: "ignore" });
    const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
    openssl("req", "-x509", ...ec, "-days", "1", "-subj", "/CN=skillctl test CA", "-keyout", "ca.key", "-out", "ca.pem");
    openssl("req", "-x509", ...ec, "-days", "1", "-subj", "/CN=unrelated CA", "-keyout", "other.key", "-out", "other.pem");
    openssl("req", ...ec, "-subj", "/CN=127.0.0.1", "-keyout", "server.key", "-out", "server.csr");
    await writeFile(path.join(dir, "ext.cnf"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
    openssl(
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "1",
      "-extfile",
      "ext.cnf",
      "-out",
      "server.pem",
    );
    ca = path.join(dir, "ca.pem");
    otherCa = path.join(dir, "other.pem");
    const tokens = { SKILL_ENGINE_TOKENS: `planner=${TOKEN}` };
    tls = await startTestEngine({
      env: { ...tokens, SKILL_ENGINE_TLS_CERT: path.join(dir, "server.pem"), SKILL_ENGINE_TLS_KEY: path.join(dir, "server.key") },
    });
    plain = await startTestEngine({ env: tokens });
  });
  afterAll(async () => {
    await tls?.dispose();
    await plain?.dispose();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("--tls-ca verifies the server against that CA, and the token travels inside TLS", async () => {
    const run = await skillctlWith({ SKILLCTL_TOKEN: TOKEN }, "--address", `127.0.0.1:${tls.app.port}`, "--tls-ca", ca, "--json", "whoami");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ agentId: "planner", admin: false, authenticated: true });
    const list = await skillctlWith({ SKILLCTL_TOKEN: TOKEN }, "--address", `127.0.0.1:${tls.app.port}`, "--tls-ca", ca, "--json", "list");
    expect(list).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(list.stdout)).toEqual({ skills: [] });
  });

  it("$SKILLCTL_TLS_CA does the same; a host name in the certificate works too; without a token the service refuses", async () => {
    const run = await skillctlWith({ SKILLCTL_TLS_CA: ca, SKILLCTL_TOKEN: TOKEN }, "--address", `localhost:${tls.app.port}`, "whoami");
    expect(run).toEqual({ code: 0, stdout: "planner (not an admin; authenticated by token)\n", stderr: "" });
    const anonymous = await skillctlWith({ SKILLCTL_TLS_CA: ca }, "--address", `localhost:${tls.app.port}`, "whoami");
    expect(anonymous.code).toBe(2);
    expect(anonymous.stderr).toMatch(/^skillctl: UNAUTHENTICATED: this service requires a token/);
  });

  it("refuses a server its CA did not sign, and one only the system roots would have to trust, with a hint", async () => {
    for (const tlsArgs of [["--tls-ca", otherCa], ["--tls"]]) {
      const run = await skillctlWith(
        { SKILLCTL_TOKEN: TOKEN },
        "--address",
        `127.0.0.1:${tls.app.port}`,
        ...tlsArgs,
        "--timeout",
        "30",
        "whoami",
      );
      expect(run.code, tlsArgs.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^skillctl: UNAVAILABLE: .*\nskillctl: hint: the server's TLS certificate is not trusted for this address: give its CA with --tls-ca/,
      );
    }
  });

  it("plaintext stays the default: it does not reach a TLS server, and TLS does not reach a plaintext one", async () => {
    const plaintextToTls = await skillctlWith({}, "--address", `127.0.0.1:${tls.app.port}`, "--timeout", "30", "whoami");
    expect(plaintextToTls.code).toBe(2);
    expect(plaintextToTls.stderr).toMatch(
      /^skillctl: UNAVAILABLE: .*\nskillctl: hint: no gRPC service answered at 127\.0\.0\.1:\d+: .*add --tls-ca or --tls\n$/,
    );

    expect((await skillctlWith({ SKILLCTL_TOKEN: TOKEN }, "--address", `127.0.0.1:${plain.app.port}`, "whoami")).stdout).toMatch(
      /^planner /,
    );
    const tlsToPlaintext = await skillctlWith({}, "--address", `127.0.0.1:${plain.app.port}`, "--tls-ca", ca, "--timeout", "30", "whoami");
    expect(tlsToPlaintext.code).toBe(2);
    expect(tlsToPlaintext.stderr).toMatch(
      /^skillctl: UNAVAILABLE: .*wrong version number[^]*\nskillctl: hint: the server does not seem to speak TLS on this port/,
    );
  });

  it("a --tls-ca that is not a certificate is a usage error before any call", async () => {
    const run = await skillctlWith({}, "--address", `127.0.0.1:${tls.app.port}`, "--tls-ca", path.join(dir, "server.key"), "whoami");
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toMatch(/^skillctl: --tls-ca .*server\.key holds no PEM certificate/);
  });
});
