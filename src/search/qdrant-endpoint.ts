import { InvalidArgumentError } from "../errors/index.js";

/** Where Qdrant's REST API is, as the client wants it spelled out. */
export interface QdrantEndpoint {
  readonly host: string;
  readonly port: number;
  readonly https: boolean;
  /** A path the API sits under behind a reverse proxy (`/qdrant`); undefined at the root. */
  readonly prefix: string | undefined;
  /** The URL as it may appear in logs and errors: no credentials, no query. */
  readonly display: string;
}

/**
 * Reads `QDRANT_URL` as a URL means it (docs/routing.md#qdrant): the scheme's default port when
 * none is given (`https://qdrant.example.com` is port 443, `http://qdrant` port 80; Qdrant's own
 * 6333 only when written), and the path as a prefix (`http://gw:8080/qdrant`). The client left
 * to itself would take 6333 for any URL without a port and drop the path, so the host, port,
 * scheme and prefix are passed to it one by one.
 */
export function parseQdrantUrl(url: string): QdrantEndpoint {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // Not echoed: a malformed URL may still carry a key.
    throw new InvalidArgumentError("QDRANT_URL", "is not a valid http(s) URL (e.g. http://qdrant:6333)");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new InvalidArgumentError("QDRANT_URL", `must start with http:// or https://, not ${parsed.protocol}//`);
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new InvalidArgumentError("QDRANT_URL", "must not carry a query or a fragment (set the key with QDRANT_API_KEY)");
  }
  const https = parsed.protocol === "https:";
  const port = parsed.port === "" ? (https ? 443 : 80) : Number(parsed.port);
  const path = parsed.pathname.replace(/\/+$/, "");
  const display = new URL(parsed.toString());
  display.username = "";
  display.password = "";
  return {
    // The client wants a bare host; an IPv6 literal keeps its brackets so that host:port parses.
    host: parsed.hostname,
    port,
    https,
    prefix: path === "" ? undefined : path,
    display: `${display.protocol}//${display.host}${path}`,
  };
}
