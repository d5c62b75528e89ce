import { X509Certificate } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { type ChannelCredentials, credentials } from "@grpc/grpc-js";
import { type GlobalOptions, type TlsMode, type TokenSource, UsageError } from "./args.js";
import { errorMessage } from "../../errors/index.js";

/** What the service accepts in a token (printable ASCII, no spaces); anything else is a mistake here. */
const TOKEN_PATTERN = /^[\x21-\x7e]+$/;

export interface ResolvedToken {
  /** Undefined when no token was given: calls go without `authorization`. */
  token: string | undefined;
  /** Where it came from, for messages (never the token itself). */
  origin: string;
  /** Lines for stderr (a token file others can read...). */
  warnings: string[];
}

function errorText(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? errorMessage(error);
}

/** Reads the token from its file or takes it from the environment; never echoes it. */
export async function resolveToken(source: TokenSource): Promise<ResolvedToken> {
  if (source.kind === "none") return { token: undefined, origin: "no token", warnings: [] };
  if (source.kind === "env") {
    const variable = source.variable ?? "SKILLCTL_TOKEN";
    if (!TOKEN_PATTERN.test(source.token)) throw new UsageError(`${variable} must be printable ASCII without spaces`);
    return { token: source.token, origin: variable, warnings: [] };
  }
  const file = source.path;
  const warnings: string[] = [];
  let text: string;
  try {
    const info = await stat(file);
    if (!info.isFile()) throw new UsageError(`--token-file ${file} is not a regular file`);
    // 0o077: any permission for group or others. The token still works; the operator is told.
    if ((info.mode & 0o077) !== 0) {
      warnings.push(
        `warning: token file ${file} is accessible to other users (mode ${(info.mode & 0o777).toString(8).padStart(3, "0")}); chmod 600 it`,
      );
    }
    text = await readFile(file, "utf8");
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read --token-file ${file}: ${errorText(error)}`);
  }
  const token = text.trim();
  if (token === "") throw new UsageError(`--token-file ${file} is empty`);
  if (!TOKEN_PATTERN.test(token))
    throw new UsageError(`--token-file ${file} must hold one token: printable ASCII, no spaces or line breaks inside`);
  return { token, origin: `--token-file ${file}`, warnings };
}

/** Plaintext, TLS with the system roots, or TLS with the CA certificates of a PEM file (checked here, not at the first call). */
export async function channelCredentials(tls: TlsMode): Promise<ChannelCredentials> {
  if (tls.kind === "insecure") return credentials.createInsecure();
  if (tls.kind === "system-roots") return credentials.createSsl();
  let pem: Buffer;
  try {
    pem = await readFile(tls.path);
  } catch (error) {
    throw new UsageError(`cannot read --tls-ca ${tls.path}: ${errorText(error)}`);
  }
  // Node's TLS layer silently ignores a CA file it cannot parse; the first call would then fail with a
  // vague certificate error. Parse every certificate now and say which file is wrong.
  const blocks = pem.toString("utf8").match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new UsageError(`--tls-ca ${tls.path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  for (const block of blocks) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new UsageError(`--tls-ca ${tls.path}: a certificate cannot be parsed: ${errorMessage(error)}`);
    }
  }
  return credentials.createSsl(pem);
}

/** The host part of `host:port`, `[v6]:port`, `dns:///host:port`; undefined for unix sockets. */
export function addressHost(address: string): string | undefined {
  if (address.startsWith("unix:")) return undefined;
  const target = address.replace(/^dns:(\/\/[^/]*)?\/?/, "").replace(/^ipv[46]:/, "");
  const bracketed = /^\[([^\]]+)\]/.exec(target);
  if (bracketed) return bracketed[1];
  const colons = target.split(":").length - 1;
  // A bare IPv6 address (several colons) has no port part.
  return colons > 1 ? target : target.split(":")[0];
}

/** Loopback addresses and unix sockets: a token sent there in plaintext never leaves the machine. */
export function isLocalAddress(address: string): boolean {
  const host = addressHost(address)?.toLowerCase();
  if (host === undefined) return true;
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** The stderr warnings about how the token travels. */
export function transportWarnings(global: GlobalOptions, token: string | undefined): string[] {
  if (token === undefined || global.tls.kind !== "insecure" || isLocalAddress(global.address)) return [];
  return [`warning: sending the bearer token to ${global.address} without TLS; anyone on the path can read it (use --tls or --tls-ca)`];
}
