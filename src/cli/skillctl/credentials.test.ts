import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { selfSigned } from "../../../test/support/self-signed.js";
import type { GlobalOptions } from "./args.js";
import { UsageError } from "./args.js";
import { addressHost, channelCredentials, isLocalAddress, resolveToken, transportWarnings } from "./credentials.js";

const TOKEN = "alice-token-0123456789abcdef";

describe("skillctl credentials", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "skillctl-credentials-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function tokenFile(name: string, content: string, mode: number): Promise<string> {
    const file = path.join(dir, name);
    await writeFile(file, content);
    await chmod(file, mode);
    return file;
  }

  it("reads a token file, trimmed, without a warning at mode 600", async () => {
    const file = await tokenFile("t600", `  ${TOKEN}\n`, 0o600);
    expect(await resolveToken({ kind: "file", path: file })).toEqual({ token: TOKEN, origin: `--token-file ${file}`, warnings: [] });
  });

  it("warns (and still uses the token) when group or others may read the file", async () => {
    const file = await tokenFile("t644", `${TOKEN}\n`, 0o644);
    const resolved = await resolveToken({ kind: "file", path: file });
    expect(resolved.token).toBe(TOKEN);
    expect(resolved.warnings).toEqual([`warning: token file ${file} is accessible to other users (mode 644); chmod 600 it`]);
    const groupOnly = await tokenFile("t640", TOKEN, 0o640);
    expect((await resolveToken({ kind: "file", path: groupOnly })).warnings).toHaveLength(1);
  });

  it("refuses an empty, multi-token, missing or non-regular file, never echoing its content", async () => {
    const empty = await tokenFile("empty", " \n", 0o600);
    await expect(resolveToken({ kind: "file", path: empty })).rejects.toThrow(/is empty/);
    const two = await tokenFile("two", `${TOKEN}\nsecond-token-0123456789\n`, 0o600);
    const error = await resolveToken({ kind: "file", path: two }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain("must hold one token");
    expect((error as Error).message).not.toContain(TOKEN);
    await expect(resolveToken({ kind: "file", path: path.join(dir, "missing") })).rejects.toThrow(/cannot read --token-file .*ENOENT/);
    await expect(resolveToken({ kind: "file", path: dir })).rejects.toThrow(/not a regular file/);
  });

  it("takes $SKILLCTL_TOKEN as it is, and nothing when there is none", async () => {
    expect(await resolveToken({ kind: "env", token: TOKEN })).toEqual({ token: TOKEN, origin: "SKILLCTL_TOKEN", warnings: [] });
    expect(await resolveToken({ kind: "env", token: "two words-0123456789" }).catch((e: unknown) => e)).toBeInstanceOf(UsageError);
    expect((await resolveToken({ kind: "none" })).token).toBeUndefined();
  });

  it("checks a --tls-ca file before any call: unreadable, not PEM, not a certificate", async () => {
    await expect(channelCredentials({ kind: "ca-file", path: path.join(dir, "nope.pem") })).rejects.toThrow(
      /cannot read --tls-ca .*ENOENT/,
    );
    const text = path.join(dir, "text.pem");
    await writeFile(text, "hello\n");
    await expect(channelCredentials({ kind: "ca-file", path: text })).rejects.toThrow(/holds no PEM certificate/);
    const broken = path.join(dir, "broken.pem");
    await writeFile(broken, "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
    await expect(channelCredentials({ kind: "ca-file", path: broken })).rejects.toThrow(/cannot be parsed/);
  });

  it("builds TLS credentials from a real CA certificate, and from the system roots", async () => {
    const { certFile: cert } = await selfSigned(dir, "skillctl-test");
    expect((await channelCredentials({ kind: "ca-file", path: cert }))._isSecure()).toBe(true);
    expect((await channelCredentials({ kind: "system-roots" }))._isSecure()).toBe(true);
    expect((await channelCredentials({ kind: "insecure" }))._isSecure()).toBe(false);
  });

  it("knows which addresses are local, and warns about a token sent elsewhere in plaintext", () => {
    expect(addressHost("127.0.0.1:50051")).toBe("127.0.0.1");
    expect(addressHost("[::1]:50051")).toBe("::1");
    expect(addressHost("dns:///engine.internal:50051")).toBe("engine.internal");
    expect(addressHost("unix:///run/skill-engine.sock")).toBeUndefined();
    for (const local of ["127.0.0.1:50051", "localhost:1", "[::1]:50051", "unix:///run/x.sock", "127.1.2.3:9"])
      expect(isLocalAddress(local)).toBe(true);
    for (const remote of ["10.0.0.5:50051", "engine:50051", "dns:///engine.example:443", "[2001:db8::1]:50051"])
      expect(isLocalAddress(remote)).toBe(false);

    const global = (address: string, tls: GlobalOptions["tls"]): GlobalOptions => ({
      address,
      json: false,
      timeoutMs: 1000,
      token: { kind: "none" },
      tls,
    });
    expect(transportWarnings(global("engine:50051", { kind: "insecure" }), TOKEN)).toEqual([
      "warning: sending the bearer token to engine:50051 without TLS; anyone on the path can read it (use --tls or --tls-ca)",
    ]);
    expect(transportWarnings(global("engine:50051", { kind: "system-roots" }), TOKEN)).toEqual([]);
    expect(transportWarnings(global("127.0.0.1:50051", { kind: "insecure" }), TOKEN)).toEqual([]);
    expect(transportWarnings(global("engine:50051", { kind: "insecure" }), undefined)).toEqual([]);
  });
});
