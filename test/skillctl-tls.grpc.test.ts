import { execFile, execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type sendUnaryData, Server, ServerCredentials, type ServerUnaryCall } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type WhoAmIRequest, type WhoAmIResponse } from "../src/gen/skillengine/v1/operations.js";
import { SkillEngineService } from "../src/gen/skillengine/v1/skill_engine.js";

/*
 * The client side of TLS. The service's own TLS (SKILL_ENGINE_TLS_CERT/KEY) is being added in
 * src/grpc/server.ts separately; until it lands, these tests talk to a minimal SkillEngine server
 * (grpc-js, WhoAmI only) that answers with what it received, so they check what skillctl does:
 * the handshake against --tls-ca or the system roots, and the bearer token travelling inside TLS.
 */

const ROOT = path.resolve(import.meta.dirname, "..");
const CLI = path.join(ROOT, "src", "cli", "skillctl.ts");
const TOKEN = "tls-test-token-7c3e91a0b2d4f658";

function skillctl(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", "tsx", CLI, ...args],
      { cwd: ROOT, env: { ...process.env, SKILLCTL_ADDRESS: "", SKILLCTL_TOKEN: "", SKILLCTL_TLS_CA: "", ...env }, timeout: 90_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr }),
    );
  });
}

/** WhoAmI names the caller after the bearer token it saw ("token-ok", "no-token", "wrong-token"). */
async function startStub(credentials: ServerCredentials): Promise<{ port: number; close(): void }> {
  const server = new Server();
  server.addService(SkillEngineService, {
    whoAmI(call: ServerUnaryCall<WhoAmIRequest, WhoAmIResponse>, callback: sendUnaryData<WhoAmIResponse>) {
      const [authorization] = call.metadata.get("authorization");
      const agentId = authorization === undefined ? "no-token" : authorization === `Bearer ${TOKEN}` ? "token-ok" : "wrong-token";
      callback(null, { agentId, admin: false, authenticated: authorization !== undefined });
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", credentials, (error, bound) => (error ? reject(error) : resolve(bound))),
  );
  return { port, close: () => server.forceShutdown() };
}

describe("skillctl over TLS (client side)", () => {
  let dir: string;
  let ca: string;
  let otherCa: string;
  let tls: Awaited<ReturnType<typeof startStub>>;
  let plain: Awaited<ReturnType<typeof startStub>>;

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
    tls = await startStub(
      ServerCredentials.createSsl(null, [
        { private_key: await readFile(path.join(dir, "server.key")), cert_chain: await readFile(path.join(dir, "server.pem")) },
      ]),
    );
    plain = await startStub(ServerCredentials.createInsecure());
  });
  afterAll(async () => {
    tls?.close();
    plain?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("--tls-ca verifies the server against that CA, and the token travels inside TLS", async () => {
    const run = await skillctl({ SKILLCTL_TOKEN: TOKEN }, "--address", `127.0.0.1:${tls.port}`, "--tls-ca", ca, "--json", "whoami");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ agentId: "token-ok", admin: false, authenticated: true });
  });

  it("$SKILLCTL_TLS_CA does the same; a host name in the certificate works too", async () => {
    const run = await skillctl({ SKILLCTL_TLS_CA: ca }, "--address", `localhost:${tls.port}`, "whoami");
    expect(run).toEqual({
      code: 0,
      stdout: "no-token (not an admin; the service has no tokens configured: every caller is this agent)\n",
      stderr: "",
    });
  });

  it("refuses a server its CA did not sign, and one only the system roots would have to trust, with a hint", async () => {
    for (const tlsArgs of [["--tls-ca", otherCa], ["--tls"]]) {
      const run = await skillctl({ SKILLCTL_TOKEN: TOKEN }, "--address", `127.0.0.1:${tls.port}`, ...tlsArgs, "--timeout", "10", "whoami");
      expect(run.code, tlsArgs.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toMatch(
        /^skillctl: UNAVAILABLE: .*\nskillctl: hint: the server's TLS certificate is not trusted for this address: give its CA with --tls-ca/,
      );
    }
  });

  it("plaintext stays the default: it does not reach a TLS server, and TLS does not reach a plaintext one", async () => {
    const plaintextToTls = await skillctl({}, "--address", `127.0.0.1:${tls.port}`, "--timeout", "5", "whoami");
    expect(plaintextToTls.code).toBe(2);
    expect(plaintextToTls.stderr).toMatch(
      /^skillctl: UNAVAILABLE: .*\nskillctl: hint: no gRPC service answered at 127\.0\.0\.1:\d+: .*add --tls-ca or --tls\n$/,
    );

    expect((await skillctl({}, "--address", `127.0.0.1:${plain.port}`, "whoami")).stdout).toMatch(/^no-token /);
    const tlsToPlaintext = await skillctl({}, "--address", `127.0.0.1:${plain.port}`, "--tls-ca", ca, "--timeout", "5", "whoami");
    expect(tlsToPlaintext.code).toBe(2);
    expect(tlsToPlaintext.stderr).toMatch(
      /^skillctl: UNAVAILABLE: .*wrong version number[^]*\nskillctl: hint: the server does not seem to speak TLS on this port/,
    );
  });

  it("a --tls-ca that is not a certificate is a usage error before any call", async () => {
    const run = await skillctl({}, "--address", `127.0.0.1:${tls.port}`, "--tls-ca", path.join(dir, "server.key"), "whoami");
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toMatch(/^skillctl: --tls-ca .*server\.key holds no PEM certificate/);
  });
});
